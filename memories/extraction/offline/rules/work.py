"""Rules for work and study: leaving a job, working at, job titles, studying."""

import re

from memories.extraction.offline.context import Clause, Context, Predicate
from memories.extraction.offline.facts import fact_add
from memories.extraction.offline.values import cut_value, job_title, plain_value, proper_name


def rule_leave(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    m = re.match(
        r"^(?:left|quit|resigned from|retired from|(?:was|got|been) (?:fired|let go|laid off) (?:from|by|at))\s+"
        r"(?:(?:my|his|her|their|the)\s+(?:old\s+)?(?:job|position|role)\s+(?:at|with)\s+|(?:working|my job)\s+(?:at|for)\s+)?(?P<org>.+)$",
        pred.text,
        re.I,
    )
    if not m or pred.negated:
        return False
    if subject == ctx.team and re.search(r"\s(?:for|in favou?r of)\s+(?-i:[A-Z])", m["org"], re.I):
        return False  # "we left Slack for Zulip": a team's switch of tools (rules/team.py), not a job
    org = proper_name(cut_value(m["org"]), clause)
    if not org:
        return False
    fact_add(ctx, clause, subject, "works_at", org, obj=org, obj_kind="organization", negated=True, confidence=confidence)
    return True


def past_employer_add(ctx: Context, clause: Clause, subject: str, org: str, *, confidence: float) -> None:
    """Where `subject` worked before (worked_at): said by them ("before NTA I was at TfL") or of them ("he joins us
    from Hermes")."""
    fact_add(ctx, clause, subject, "worked_at", org, obj=org, obj_kind="organization", confidence=confidence,
             sentence=f"{subject} worked at {org} before.")


# "he's joining us from Deliveroo", "Felix joins us from Hermes", "she comes to us from the BBC": where a newcomer worked
_JOINS_FROM = re.compile(r"^(?:joins|joined|is joining|am joining|will join|comes|came|is coming|am coming)\s+(?:us|the team|to us|over)\s+from\s+(?P<org>.+)$", re.I)


def rule_work(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    t = pred.text
    if (m := _JOINS_FROM.match(t)) and not pred.negated and subject != ctx.team:
        org = proper_name(cut_value(m["org"]), clause)
        if org and org[:1].isupper():
            past_employer_add(ctx, clause, subject, org, confidence=min(confidence, 0.8))
            return True
    patterns = [
        # "work at Google (as …) (in …)", "have worked for Acme"
        r"^(?P<verb>work|works|working|am working|is working|are working|worked|was working)\s+(?:at|for|with)\s+(?P<org>.+)$",
        # "started at Google", "started a new job at Google", "joined Google", "got a job at Acme"
        r"^(?P<verb>started|start|starting|began|begun|am starting)\s+(?:(?:working|work|a new job|a job|my new job|"
        r"my job|a new role|a new position|a position|an internship|my internship|a new gig|a gig)\s+)?(?:at|with|for)\s+(?P<org>.+)$",
        r"^(?P<verb>joined|join|am joining|is joining)\s+(?:the\s+team\s+at\s+)?(?P<org>.+)$",
        r"^(?P<verb>got|landed|accepted|took|have|has|got offered|was offered|am starting|started)\s+(?:a|an|the|my)\s+(?:new\s+|first\s+|dream\s+)?"
        r"(?:job|position|role|internship|offer|gig)(?:\s+as\s+(?:a|an)\s+(?P<as>.+?))?\s+(?:at|with|for)\s+(?P<org>.+)$",
        r"^(?P<verb>(?:was|got|been|am|is)\s+)?hired\s+(?:at|by)\s+(?P<org>.+)$",
    ]
    for pattern in patterns:
        if m := re.match(pattern, t, re.I):
            break
    else:
        return rule_role(pred, subject, clause, ctx, confidence)
    org_text = cut_value(m["org"])
    org = proper_name(org_text, clause)
    if not org:
        # "works at the library as a librarian": no named employer, but the role still counts.
        if pred.negated:
            return False
        before = len(ctx.facts)
        trailing_work(m["org"][len(org_text) :], subject, clause, ctx, confidence)
        return len(ctx.facts) > before
    verb = (m["verb"] or "").strip().lower()
    if verb in {"worked", "was working"} and not pred.perfect:
        if not pred.negated:
            fact_add(ctx, clause, subject, "worked_at", org, obj=org, obj_kind="organization", confidence=confidence)
        return True
    if pred.negated and verb not in {"work", "works", "working", "am working", "is working", "are working"}:
        return False  # "I didn't join Google" is not a state we can store
    fact_add(ctx, clause, subject, "works_at", org, obj=org, obj_kind="organization", negated=pred.negated, confidence=confidence)
    if pred.negated:
        return True
    if m.groupdict().get("as"):
        role = job_title(m["as"])
        if role:
            fact_add(ctx, clause, subject, "role", role, confidence=confidence)
    rest = m["org"][len(org_text) :]
    trailing_work(rest, subject, clause, ctx, confidence)
    return True


def trailing_work(rest: str, subject: str, clause: Clause, ctx: Context, confidence: float) -> None:
    """"… as a software engineer in San Francisco (at Google)": role, place, organisation."""
    for segment in re.finditer(r"(?:^|\s)(as|in|at|for)\s+", rest, re.I):
        word, value = segment[1].lower(), cut_value(rest[segment.end() :])
        if word == "as":
            role = job_title(value)
            if role:
                fact_add(ctx, clause, subject, "role", role, confidence=confidence)
        elif word == "in":
            place = proper_name(value, clause)
            if place:
                fact_add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", confidence=min(confidence, 0.8))
        elif word in {"at", "for"}:
            org = proper_name(value, clause)
            if org:
                fact_add(ctx, clause, subject, "works_at", org, obj=org, obj_kind="organization", confidence=confidence)


def rule_role(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    t = pred.text
    strong = [
        r"^(?:got\s+|was\s+|been\s+|am\s+|is\s+)?promoted\s+to\s+(?P<role>.+)$",
        r"^(?:work|works|working|am working|is working)\s+as\s+(?P<role>.+)$",
        r"^(?:started|start|began|joined)\s+as\s+(?P<role>.+)$",
        r"^(?:became|become|am becoming|is becoming)\s+(?P<role>(?:a|an|the)\s+.+)$",
    ]
    for pattern in strong:
        if m := re.match(pattern, t, re.I):
            role_text = cut_value(m["role"])
            role = job_title(role_text, strict=pattern.startswith("^(?:became"))
            if not role:
                return False
            fact_add(ctx, clause, subject, "role", role, negated=pred.negated and pred.no_longer, confidence=confidence)
            if not pred.negated:
                trailing_work(m["role"][len(role_text) :], subject, clause, ctx, confidence)
            return True
    # "I am a nurse", "she is a teacher at Lincoln High", "I am the CTO of Acme": a job word is required.
    if m := re.match(r"^(?:am|is|are|work as)\s+(?P<role>(?:a|an|the|our|their)\s+.+|(?:head|director|chief|vp)\s+of\s+.+)$", t, re.I):
        role_text = cut_value(m["role"])
        role = job_title(role_text, strict=True)
        if not role:
            return False
        rest = m["role"][len(role_text) :]
        of = re.match(r"^\s+of\s+(?P<org>.+)$", rest, re.I)
        head = role.split()[-1].lower()
        if head == "student" and (at := re.match(r"^\s+(?:at|in)\s+(?P<org>.+)$", rest, re.I)):
            school = proper_name(cut_value(at["org"]), clause)
            fact_add(ctx, clause, subject, "role", role, negated=pred.negated, confidence=confidence)
            if school and not pred.negated:
                fact_add(ctx, clause, subject, "studies_at", school, obj=school, obj_kind="organization", confidence=confidence)
            return True
        fact_add(ctx, clause, subject, "role", role, negated=pred.negated, confidence=confidence)
        if pred.negated:
            return True
        if of:
            org = proper_name(cut_value(of["org"]), clause)
            if org:
                fact_add(ctx, clause, subject, "works_at", org, obj=org, obj_kind="organization", confidence=confidence)
        else:
            trailing_work(rest, subject, clause, ctx, confidence)
        return True
    return False


def rule_study(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    m = re.match(
        r"^(?:study|studies|studying|am studying|is studying|am majoring in|is majoring in|major in|majoring in)\s+(?P<what>.+)$",
        pred.text,
        re.I,
    )
    if not m or pred.negated:
        return False
    what = cut_value(m["what"])
    rest = m["what"][len(what) :]
    topic = plain_value(what, max_words=4)
    if topic and topic.lower().split()[0] not in {"at", "in", "for", "hard", "a", "the"}:
        fact_add(ctx, clause, subject, "studies", topic, confidence=confidence)
    if at := re.match(r"^\s+(?:at|in)\s+(?P<school>.+)$", rest, re.I):
        school = proper_name(cut_value(at["school"]), clause)
        if school:
            fact_add(ctx, clause, subject, "studies_at", school, obj=school, obj_kind="organization", confidence=confidence)
    return bool(topic)
