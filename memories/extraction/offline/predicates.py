"""A predicate made ready for the rules (fillers dropped, negation and the perfect noted), then
matched against them in order; the first rule that fits gives the facts."""

import re

from memories.extraction.offline.context import Clause, Context, Predicate
from memories.extraction.offline.rules import RULES

# Adverbs that change nothing we store; removed from predicates (lowercase only, so a name
# like "Just Eat" survives).
_FILLERS = re.compile(
    r"\b(?:just|really|actually|finally|officially|currently|recently|also|still|totally|absolutely|truly|basically|"
    r"literally|honestly|definitely|certainly|always|usually|now|happily|proudly|luckily|unfortunately|sadly|"
    r"officially|newly|already|even|kinda|sort of|kind of)\b\s*"
)
_PARTICIPLES = (
    r"(?:moved|relocated|started|joined|lived|worked|got|gotten|become|begun|left|quit|adopted|bought|"
    r"married|visited|traveled|travelled|been|made|taken|found|switched|landed|accepted|retired|graduated|"
    r"finished|studied|loved|liked|hated|enjoyed|played|spoken|learned|learnt|grown|grew|turned|had|"
    r"owned|led|used|migrated|changed|replaced|run|headed|maintained|decided|agreed|chosen|picked|adopted|reported)"
)


# The perfect's participles whose simple past differs: the rules read the verb group in one form
# ("have chosen" / "chose", "has taken over" / "took over", "have run" / "ran").
_IRREGULAR = {
    "chosen": "chose", "taken": "took", "given": "gave", "gone": "went", "begun": "began", "written": "wrote",
    "become": "became", "spoken": "spoke", "driven": "drove", "shown": "showed", "grown": "grew", "done": "did",
    "run": "ran", "come": "came", "undertaken": "undertook", "overtaken": "overtook", "forgotten": "forgot",
}  # fmt: skip
_IRREGULAR_RE = "(?:" + "|".join(_IRREGULAR) + ")"


def _simple_past(text: str) -> str:
    """"chosen Parquet as …" → "chose Parquet as …": the participle after a dropped "have" in its
    simple-past form (regular verbs are the same)."""
    first, _, rest = text.partition(" ")
    past = _IRREGULAR.get(first.lower())
    return f"{past} {rest}".strip() if past else text


def _prepare(text: str, *, first_person: bool) -> Predicate | None:
    pred = Predicate(text=" ".join(text.split()))
    t = pred.text
    t = re.sub(r"\b(?:have|has) been to\b", "visited", t)
    if m := re.match(r"^(?:have|has)\s+been\b\s*", t, re.I):
        t, pred.perfect = ("am " if first_person else "is ") + t[m.end() :], True
    elif m := re.match(r"^had\s+been\b\s*", t, re.I):
        t = "was " + t[m.end() :]
    t = _FILLERS.sub("", t).strip()
    # "will own the store service", "is going to lead QA", "will be in charge of on-call": a role announced is held from
    # when it is said (other plans stay plans: read_clause drops them)
    if m := re.match(r"^(?:will|(?:am|is|are)\s+going\s+to)\s+(?=(?:own|lead|head|manage|report|take over|look after|be)\b)", t, re.I):
        t = t[m.end():]
        t = re.sub(r"^be\s+", "am " if first_person else "is ", t, count=1, flags=re.I)
    if m := re.match(rf"^(?:have|has|had)\s+(?={_PARTICIPLES}\b|(?!\w*eed\b)\w{{3,}}ed\b|{_IRREGULAR_RE}\b)", t, re.I):
        t, pred.perfect = _simple_past(t[m.end() :]), True
    if re.search(r"\s+(?:any ?more|any longer)$", t, re.I):
        t, pred.negated, pred.no_longer = re.sub(r"\s+(?:any ?more|any longer)$", "", t, flags=re.I), True, True
    if m := re.match(r"^(am|is|are|was)\s+no longer\s+", t, re.I):
        t, pred.negated, pred.no_longer = f"{m[1]} " + t[m.end() :], True, True
    elif m := re.match(r"^no longer\s+", t, re.I):
        t, pred.negated, pred.no_longer = t[m.end() :], True, True
    elif m := re.match(r"^(?:do|does|did)\s+not\s+", t, re.I):
        t, pred.negated = t[m.end() :], True
    elif m := re.match(r"^(am|is|are)\s+not\s+(?!a fan\b|into\b)", t, re.I):
        t, pred.negated = f"{m[1]} " + t[m.end() :], True
    elif re.match(r"^(?:have|has|had|was|were)\s+not\b", t, re.I):
        return None  # "I haven't lived there", "I wasn't hired": too easy to misread
    pred.text = t.strip()
    return pred if pred.text else None


# Any word of time or of intention in a clause: a month, a weekday, a season, a number, "week", "next", "soon", "plan".
TIME_OR_WISH = re.compile(
    r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|"
    r"\b(?:spring|summer|autumn|fall|winter|week|weekend|month|year|quarter|term|semester|today|tonight|tomorrow|"
    r"next|soon|later|upcoming|eventually|coming|after|once|before|until|by|plan|planning|planned|hope|hoping|thinking|"
    r"considering|might|maybe|probably|possibly)s?\b", re.I)


def progressive_done(pred: Predicate, clause: Clause, ctx: Context) -> None:
    """"We're moving chat from Teams to Slack in August 2026": a switch under way with a time said is read as done
    from that time, even one still ahead (the store keeps a tool's day ahead, `extract.SCHEDULED_AHEAD`; any other
    state begins when said at the latest), and so is one that names both ends and says no time or intention ("we're
    switching from Zoom to Teams"); one with a wish or a time it does not name ("… soon", "planning on …"), or naming
    one end with no time ("we're moving the docs to Notion"), is a plan and gives nothing."""
    m = re.match(r"^(?:am|is|are)\s+(?P<verb>moving|switching|migrating|changing)\b", pred.text, re.I)
    # "We're switching from Davis to Iso-Analytical": a switch that names both ends and no time is under way as it is said.
    # One with a time the clause resolves ("… on 1 November") begins then; one with a word of time it does not resolve
    # ("… over the summer", "… next week") or of a wish ("… soon", "planning on …") stays a plan.
    named_both = (m is not None and clause.valid_from is None and re.search(r"\bfrom\s+\S.*\bto\s+\S", pred.text[m.end():], re.I)
                  and not TIME_OR_WISH.search(clause.text))
    if m and (named_both or clause.valid_from is not None):
        pred.text = {"moving": "moved", "switching": "switched", "migrating": "migrated", "changing": "changed"}[m["verb"].lower()] + pred.text[m.end():]


def predicate_read(text: str, subject: str, clause: Clause, ctx: Context, *, first_person: bool, confidence: float = 0.9) -> bool:
    """Match one predicate against the rules; True when it gave a fact."""
    pred = _prepare(text, first_person=first_person)
    if pred is None:
        return False
    progressive_done(pred, clause, ctx)
    before = len(ctx.facts)
    for rule in RULES:
        if rule(pred, subject, clause, ctx, confidence):
            break
    return len(ctx.facts) > before
