"""answer and history.

`answer` gathers evidence with `recall_evidence` and, with a language model, asks it to answer
only from that evidence (with each fact's supersession chain and the time asked about) and to
cite the ids it used. Offline (or when the model fails), it answers from the facts themselves:
when a fact holds the attribute the question asks about, in whatever words ("where is maya
based?" → lives_in, "what payment provider do we use?" → the team's payment_tool), it says so in
one line — now, as of a time the question names, before a value it names (the chain), or who
holds a value ("who owns billing?"); else it quotes the evidence's sentence that answers; and it
always returns the best facts and evidence, so a person can judge.
"""

import calendar
import logging
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Q
from pydantic import BaseModel, Field

from memoryweb.errors import InvalidInput
from memories.extraction.offline.dates import YEAR as _YEAR, year_named
from memories.extraction.offline.amend import CORRECTION_AMONG, CORRECTION_WITHIN, amended, holds_shape, restated
from memories.extraction.offline.contrast import contrasted
from memories.extraction.offline.words import NOT_NAMES
from memories.extraction.vocabulary import FUNCTION_PHRASES, FUNCTION_SYNONYMS, TOOL_WORDS, function_key, is_single_valued
from memories.models import Entity, Episode, Fact, FactStatus, Scope
from memories.normalize import normalize_name, normalize_value
from retrieval.intents import TASTES, asks_history, attributes_asked, mentions_first_person, priority_attributes, reverse_asked
from retrieval.search import RecallItem, RecallResult, recall_evidence
from retrieval.search.question import entities_named, scope_speakers, speaker_entity
from retrieval.spans import WEEKDAY_SAID, date_span, day_span, expected_kind, fits, holds_date, only_when
from retrieval.temporal import as_of_in_question, parse_time

logger = logging.getLogger("memoryweb.retrieval")

SYSTEM = """You answer questions about what a shared memory holds.
Use ONLY the numbered evidence below; if it does not hold the answer, say you do not know.
Prefer active facts; a superseded fact tells what used to be true, with its interval.
Reply with one JSON object: {"answer": "...", "citations": ["<id>", ...]} citing the ids you used."""


class ModelAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=4000)
    citations: list[str] = Field(default_factory=list)


@dataclass
class Answer:
    question: str
    text: str
    evidence: list[RecallItem]
    facts_used: list[RecallItem] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    provider: str = "offline"
    recall: RecallResult | None = None

    def as_dict(self) -> dict:
        return {
            "question": self.question,
            "answer": self.text,
            "citations": self.citations,
            "facts_used": [item.id for item in self.facts_used],
            "provider": self.provider,
            "window": self.recall.window.as_dict() if self.recall and self.recall.window else None,
            "evidence": [item.as_dict() for item in self.evidence],
        }


def answer(*, scope: Scope, question: str, speaker: str = "", k: int = 10, now: datetime | None = None) -> Answer:
    """Answer `question` from the memory of `scope`, citing the evidence."""
    question = (question or "").strip()
    if not question:
        raise InvalidInput("The question is empty.")
    from django.utils import timezone

    as_of = as_of_in_question(question, now=now or timezone.now())
    result = recall_evidence(scope=scope, query=question, k=k, speaker=speaker, now=now, as_of=as_of)
    facts = [item for item in result.items if item.kind == "fact"]
    direct, used = _direct_answer(scope=scope, question=question, speaker=speaker, facts=facts, now=now, as_of=as_of)
    span, spoken = ("", None) if direct else _evidence_answer(question, result.items, scope=scope, current=as_of is None, asker=speaker)
    quoted = result.items
    if not direct and not span:
        # No fact answers, yet facts about others can fill the evidence (every "X lives in Y" for "where does Oskar
        # live?") and push out the words that answer: the same question asked of what was said alone gives the span,
        # and the quote leaves out the facts about anyone the question does not name.
        said = recall_evidence(scope=scope, query=question, k=k, speaker=speaker, now=now, as_of=as_of, filters={"kinds": ["episode", "turn"]})
        span, spoken = _evidence_answer(question, said.items, scope=scope, current=as_of is None, asker=speaker)
        quoted = _about_those_named(scope, question, speaker, result.items, said.items)
    if direct:
        cited = used
    elif spoken is not None:
        cited = [spoken]
    else:
        cited = result.items[:3]
    now_asked = as_of is None and not _ASKS_PAST.search(question)
    offline = Answer(
        question=question, text=direct or span or _quoted(quoted, scope=scope if now_asked else None), evidence=result.items, facts_used=used or facts[:3],
        citations=[item.id for item in cited], recall=result,
    )
    from memoryweb.providers.llm import get_llm

    try:
        llm = get_llm()
    except Exception as exc:  # a provider that cannot be configured: the offline answer stands
        logger.warning("No language model for answers: %s", exc)
        return offline
    if getattr(llm, "is_offline", True) or not result.items:
        return offline
    try:
        user = _prompt(question, result.items, scope=scope, used=used, as_of=as_of, window=result.window)
        reply = llm.complete_json(system=SYSTEM, user=user, schema=ModelAnswer)
    except Exception as exc:  # timeouts, invalid JSON after retries: fall back, say why in the log
        logger.warning("The language model could not answer (%s); answering offline.", exc)
        return offline
    known = {item.id for item in result.items}
    citations = [c for c in reply.citations if c in known]
    return Answer(
        question=question, text=reply.answer, evidence=result.items,
        facts_used=[item for item in facts if item.id in citations], citations=citations,
        provider=getattr(llm, "name", "llm"), recall=result,
    )


def _prompt(question: str, items: list[RecallItem], *, scope: Scope | None = None, used: list[RecallItem] | None = None,
            as_of: datetime | None = None, window=None) -> str:
    """The evidence, numbered; then each fact's supersession chain (what it replaced and what
    replaced it, with intervals) and the time the question asks about, so the model can answer
    "before" and "in August 2026" questions as the memory stood."""
    items = list(items) + [u for u in used or [] if u.id not in {i.id for i in items}]
    lines = []
    for item in items:
        when = ""
        if item.kind == "fact":
            when = f" (valid {_day(item.valid_from)} – {_day(item.valid_to) if item.valid_to else 'now'}, {item.status})"
        elif item.occurred_at:
            when = f" ({_day(item.occurred_at)}{', ' + item.speaker if item.speaker else ''})"
        lines.append(f"[{item.id}] {item.kind}{when}: {item.text}")
    text = "Evidence:\n" + "\n".join(lines)
    chains = _chains(scope, [i for i in items if i.kind == "fact"]) if scope is not None else []
    if chains:
        text += "\n\nFact chains (oldest first; an empty interval was corrected, never true):\n" + "\n".join(chains)
    if as_of is not None:
        text += f"\n\nThe question asks as of {_day(as_of)}: answer with what was true then."
    elif window is not None:
        text += f"\n\nThe question's time window: {_day(window.start)} to {_day(window.end) if window.end else 'now'}."
    return text + f"\n\nQuestion: {question}"


def _chains(scope: Scope, items: list[RecallItem]) -> list[str]:
    from memories.services.facts import fact_chain

    out, seen = [], set()
    for fact in Fact.objects.in_scope(scope).filter(public_id__in=[i.id for i in items]).select_related("subject"):
        if fact.pk in seen:
            continue
        chain = fact_chain(scope=scope, fact=fact)
        seen.update(f.pk for f in chain)
        if len(chain) > 1:
            holders = {f.subject_id for f in chain}
            steps = " -> ".join(
                (f"{f.subject.name}: " if len(holders) > 1 else "") + f"{f.value} ({_day(f.valid_from)} – {_day(f.valid_to) if f.valid_to else 'now'})"
                for f in chain
            )
            out.append(f"- {'' if len(holders) > 1 else fact.subject.name + ' '}{fact.attribute}: {steps}")
    return out


def _day(moment: datetime | None) -> str:
    """ISO, for the model's prompt."""
    return moment.date().isoformat() if moment else "?"


def said_day(moment: datetime | None) -> str:
    """A date as people write it in an answer: "14 March 2025"; the first of a month at midnight,
    which is how "in May 2025" is stored, as "May 2025"."""
    if moment is None:
        return "?"
    if moment.day == 1 and (moment.hour, moment.minute, moment.second, moment.microsecond) == (0, 0, 0, 0):
        return f"{calendar.month_name[moment.month]} {moment.year}"
    return f"{moment.day} {calendar.month_name[moment.month]} {moment.year}"


def _quoted(items: list[RecallItem], *, scope: Scope | None = None) -> str:
    """The closest memories, quoted. With `scope` (a question about now), each quote elides what it says is gone and
    what the scope holds only as no longer true (`_current_quoted`): "Ditched … for DaVinci Resolve", so that an old
    value is not offered beside the current one."""
    if not items:
        return "I don't know: nothing in this memory matches."
    lines = ["I found no fact that answers this directly. The closest memories:"]
    for item in items[:3]:
        text = _current_quoted(item.text, span="", scope=scope, gone=set()) if scope is not None else item.text
        lines.append(f'- "{text}" ({item.kind}{", " + said_day(item.occurred_at) if item.occurred_at else ""})')
    return "\n".join(lines)


def _direct_answer(*, scope: Scope, question: str, speaker: str, facts: list[RecallItem], now: datetime | None = None,
                   as_of: datetime | None = None) -> tuple[str, list[RecallItem]]:
    """One line from the facts when the question asks for an attribute a fact holds: its value
    now, at the time the question names (`as_of`), before a value it names (the supersession
    chain), or who holds a value ("who owns billing?")."""
    by_id = {item.id: item for item in facts}
    usable = Fact.objects.in_scope(scope).exclude(status__in=[FactStatus.RETRACTED, FactStatus.HELD]).select_related("subject")
    reverse = reverse_asked(question)
    if reverse is not None:
        found = _reverse_answer(usable, reverse, as_of=as_of, by_id=by_id)
        if found[0]:
            return found  # else "who manages maya?" is maya's reports_to, asked forwards
    plain = _POSSESSIVE.sub("", question)
    subjects = _subjects(scope, plain, speaker)
    if subjects:  # "Was the offsite in Porto?": Porto is named as a value, not as whom the question is about
        holders = set(usable.filter(subject__in=subjects).values_list("subject_id", flat=True).distinct())
        subjects = [s for s in subjects if s.pk in holders or not usable.filter(object_entity=s).exists()]
    if as_of is None and subjects and re.search(r"\bwhen\s+(?:he|she|they|i|you|\w+)\s+(?:first\s+)?(?:joined|started|arrived|came on board)\b", question, re.I):
        # "where did Noor live when she joined?": as of the first thing the memory holds about them
        first = usable.filter(subject=subjects[0]).exclude(valid_from=None).order_by("valid_from", "id").first()
        as_of = first.valid_from if first is not None else None
    attributes = question_attributes(question, usable.filter(subject__in=subjects) if subjects else usable, as_of=as_of, now=now)
    yes_no = re.match(r"^\s*(?:is|are|was|were|do|does|did|has|have|had)\b", question, re.I)
    if not attributes and (yes_no or re.search(r"\bbefore\b", question, re.I)):
        # "what did we use before Adyen?", "does Farid still use Sketch?": the attribute of the value named
        attributes = _attribute_of_value_named(question, usable.filter(subject__in=subjects) if subjects else usable)
    if not attributes:
        return "", []
    candidates = usable.filter(attribute__in=attributes)
    if subjects:
        held = set(candidates.filter(subject__in=subjects).values_list("subject_id", flat=True))
        subject = next((s for s in subjects if s.pk in held), None)
        if subject is None:
            return "", []
        candidates = candidates.filter(subject=subject)
    elif attributes == ("lives_in",):
        return "", []  # where someone lives, with nobody named: "which city was the congress in?" is not anyone's home
    elif set(attributes) <= _OF_SOMEONE and not re.match(r"^\s*who\b", question, re.I):
        # A taste or a job, with nobody named: "which pub did the band play?", "what make was the boiler at the Hendry
        # job?", "how are permits to work issued?" are not answered by whoever's fact is newest.
        return "", []
    else:
        subject = None
    rows = list(candidates.order_by("-valid_from", "-id")[:200])
    if not rows:
        return "", []
    you = subject is not None and mentions_first_person(question) and subject == speaker_entity(scope, speaker)
    if re.search(r"\bafter\b|\b(?:move|moved|switch|switched|migrate|migrated|go|went|change|changed)\b.*\bfrom\b", question, re.I):
        chained = _after_answer(question, rows, you=you, by_id=by_id)  # "which wiki did we move to from Confluence?"
        if chained[0]:
            return chained
    if re.search(r"\bbefore\b", question, re.I):
        chained = _before_answer(question, rows, you=you, by_id=by_id)
        if chained[0]:
            return chained
    elif asks_history(question) and as_of is None:
        return _history_answer(question, rows, you=you, by_id=by_id)
    if as_of is not None:
        valid = [f for f in rows if _valid_at(f, as_of)]
    else:
        valid = [f for f in rows if f.status == FactStatus.ACTIVE]
    if not valid:
        return "", []
    chosen = []
    for attribute in attributes:
        of_attribute = [f for f in valid if f.attribute == attribute]
        if not of_attribute:
            continue
        if is_single_valued(attribute):
            chosen.append(of_attribute[0])  # the newest
        else:
            chosen.extend(_on_topic(question, of_attribute))
        if chosen and attribute in ("role", "works_at") and len(attributes) > 1:
            continue
        if chosen:
            break
    kind = expected_kind(question)
    named = f" {normalize_name(question)} "
    chosen = [f for f in chosen if fits(kind, attribute=f.attribute, value=f.value) or (kind == "date" and f" {f.value_normalized} " in named)]
    if years := set(_YEAR.findall(question)):
        # "when is the 2026 hackathon?" is not answered by a day of 2025 ("the hackathon is on 12 June 2025")
        chosen = [f for f in chosen if not (held := set(_YEAR.findall(f.value))) or held & years]
    if not chosen:
        return "", []  # "when did the app ship?" is not answered by the app's framework; "when did we move to X?" by X's since-date
    if re.match(r"^\s*how\s+(?:many|much)\b", question, re.I) and not any(re.search(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|hundred|thousand)\b", f.value, re.I) for f in chosen):
        return "", []  # "how many plays did the demo get?" is not answered by "the demo is live": no number, no answer from facts
    text = _sentence(chosen, you=you)
    if as_of is not None:
        text = f"As of {said_day(as_of)}: {text[0].lower() + text[1:] if you else text}"
    return text, [by_id.get(str(f.public_id)) or _item(f) for f in chosen]


# What someone likes or does for fun, their job and their employer: asked of someone ("what's Ayo's hobby?", "what do I
# do for work?") or asked who ("who plays chess?", "who works the weekend shift?"), never of a thing.
_OF_SOMEONE = frozenset({*TASTES, "dislikes", "role", "works_at"})
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_STOP = set(
    "a an the of to in on at for by with from and or is are was were be been do does did what which who whom whose when "
    "where why how we us our i me my you your he she they it its this that there here use used using now currently about "
    "ever before after since until tell know".split()
)


def _terms(text: str) -> set[str]:
    """The content words of a text, each in the form the attribute names use (billing → payment,
    provider → tool, favourite → favorite, dashboards → dashboard)."""
    out = set()
    text = text.lower().replace("on-call", "on_call oncall")
    text = re.sub(r"\boff[- ]sites?\b", "offsite", text)  # spellings of one word
    text = re.sub(r"\bstand[- ]ups?\b", "standup", text)
    text = re.sub(r"\bea\b", "early access", text)  # an abbreviation teams say
    text = re.sub(r"\b(?:go|goes|went|gone|going)\s+live\b", "launch", text)  # a launch, not a home
    for phrase, pattern, said_as in _PHRASES_SAID:  # "continuous integration" is CI, and its own words are still said
        if phrase in text:
            text = pattern.sub(said_as, text)
    text = re.sub(r"(?<=\w)['’]s\b", "", text)  # "Mei's": Mei (the possessive's "s" is no word both may share)
    for word in re.findall(r"[a-z0-9_]+", text):
        out |= _ASKS.get(word, set())
        if word in _STOP:
            continue
        term = _word(word)
        out.add(term)
        if "_" in term:
            out.update(term.split("_"))  # "alerts" is on_call: the words of on_call_tool
    return out


def _word(word: str) -> str:
    """One word of a question or of an attribute's name, in one form: its synonym or function
    (billing → payment, retreat → offsite), and "planning" as "plan" (a verb's -ing and -ed forms, so
    "what do we plan sprints in?" finds sprint_planning_place)."""
    term = _TERM_SYNONYMS.get(word) or function_key(word) or word
    if len(term) >= 6 and term.endswith(("ing", "ed")) and "_" not in term:
        term = term[:-3] if term.endswith("ing") else term[:-2]  # "localizing" and "localized" are one word
        if len(term) > 3 and term[-1] == term[-2] and term[-1] not in "ls":
            term = term[:-1]
    return term


_FUNCTION_KEYS = frozenset(FUNCTION_SYNONYMS.values()) | frozenset(FUNCTION_PHRASES.values())
# Each function phrase as a question or a sentence is read: the function's name, then the phrase's own words but those
# that name a function of their own ("password manager": password and manager; "infrastructure as code": infra, not code).
_PHRASES_SAID = [(phrase, re.compile(rf"\b{re.escape(phrase)}\b"),
                  " ".join([key, *(w for w in phrase.split() if len(w) > 2 and function_key(w) not in _FUNCTION_KEYS)]))
                 for phrase, key in FUNCTION_PHRASES.items()]
_TERM_SYNONYMS = {
    **{w: "tool" for w in TOOL_WORDS}, "hosted": "code", "favourite": "favorite", "best": "favorite", "preferred": "favorite",
    "when": "date", "day": "date", "often": "schedule", "frequently": "schedule", "lives": "live", "living": "live",
    "lived": "live", "likes": "like", "liked": "like", "speaks": "speak", "spoke": "speak", "languages": "speak",
    "language": "speak", "decide": "decision", "decided": "decision", "decisions": "decision", "agree": "decision",
    "agreed": "decision", "oncall": "on",
}
_GENERIC_TERMS = {"tool", "date", "schedule", "place", "time", "length", "in", "at", "of", "has"}  # ("has_daughter": the daughter)
# What a question word asks for, in the words attribute names end with: "where is the retro?" is
# retro_place, "which day is the retro?" retro_schedule (or a date), "what time is standup?" standup_time.
_ASKS = {"where": {"place"}, "day": {"schedule", "date"}, "days": {"schedule"}, "when": {"date", "time", "schedule"},
         "time": {"time"}, "often": {"schedule"}, "long": {"length"}}


# A question about a past employer: "where did Nadia work before Kestrel?", "what was Olu's previous employer?",
# "which company did Liesel join us from?"
_PAST_JOB = re.compile(r"\b(?:before|previous|previously|prior|former|formerly|used to|last job|earlier)\b|\bjoin(?:ed|ing)?\b.*\bfrom\b", re.I)


def question_attributes(question: str, facts, *, as_of: datetime | None = None, now: datetime | None = None) -> tuple[str, ...]:
    """The attributes a question asks about: a relation said in its own words first (manager,
    boss → reports_to), then the scope's own attributes whose every word the question says
    (in their other spellings: "payment provider" is payment_tool, "favourite coffee"
    favorite_coffee), then the fixed question patterns ("where … live" → lives_in)."""
    priority = priority_attributes(question)
    if priority:
        return priority
    said = _terms(question)
    if year := re.search(r"\b(this|next|last)\s+year(?:'s)?\b", question, re.I):  # "the retreat this year" is the 2026 offsite
        from django.utils import timezone

        said.add(str(year_named(year[1], (now or timezone.now()).year)))
    best, best_score = None, (0, 0, 0.0, 0)
    past_job = _PAST_JOB.search(question)
    for attribute in sorted(facts.order_by().values_list("attribute", flat=True).distinct()[:1000]):
        if attribute == "worked_at" and not past_job:
            continue  # "which office does Liesel work from?" asks about now, not where she worked before
        words = [_word(w) for w in attribute.split("_")]
        content = [w for w in words if w not in _GENERIC_TERMS]
        if not content or not all(w in said for w in content):
            continue
        if len(words) == 1 and not _said_as_head(words[0], question):
            continue  # "which room do we use for client meetings?" asks about meetings, not the client
        if words[0] == "has" and _asks_another_thing(question, content[-1]):
            continue  # "which school is my daughter starting at?" asks the school, not who the daughter is
        if words[-1] == "tool" and len(content) == 1 and (_asks_aspect(content[0], question) or _one_named(content[0], question)):
            continue  # "what's the infrastructure budget?" asks the budget, not infra_tool; "the Hendry job" is one job, not job_tool
        said_generic = sum(1 for w in words if w in _GENERIC_TERMS and w in said)
        # Most words said first; then the attribute said most fully ("decide about the dashboard":
        # decision, wholly said, before dashboard_tool, half said).
        # Last, the attribute whose words the question says as they are ("where is our email hosted?": email_tool,
        # not code_tool through hosted → code)
        literal = sum(1 for w in attribute.split("_") if re.search(rf"\b{re.escape(w)}", question, re.I))
        score = (len(content), said_generic, (len(content) + said_generic) / len(words), literal)
        if score > best_score:
            best, best_score = attribute, score
    if best is not None:
        return (best,)
    fixed = attributes_asked(question)
    if fixed and all(a.startswith("has_") for a in fixed) and _asks_another_thing(question, ""):
        fixed = ()  # "what breed is my dog?" asks the breed, not the dog's name
    if fixed and past_job and "works_at" in fixed and facts.filter(attribute="worked_at").exists():
        return ("worked_at",)  # "what was Olu's previous employer?"
    if fixed:
        return fixed
    if as_of is not None:  # "was the 2025 offsite in Ljubljana?": of the offsites, one that held then
        facts = facts.filter(Q(valid_from__isnull=True) | Q(valid_from__lte=as_of), Q(valid_to__isnull=True) | Q(valid_to__gt=as_of))
    return _headed(said, facts, question)


# What a question may ask about a function other than its tool: "the infrastructure budget", "the email password".
_ASPECTS = frozenset("budget budgets cost costs price prices bill bills spend contract contracts renewal licence license licences "
                     "licenses deadline deadlines date dates owner owners lead leads manager password passwords login logins address "
                     "number phone rep account accounts quote quotes invoice invoices fee fees rate rates".split())


def _asks_aspect(term: str, question: str) -> bool:
    """Whether the question says `term` only before another aspect of it (`_ASPECTS`: "the infrastructure budget for
    2027", "the wiki owner"), not as the thing whose tool it asks."""
    tokens = re.findall(r"[a-z0-9_]+", question.lower())
    at = [i for i, token in enumerate(tokens) if _word(token) == term]
    return bool(at) and all(i + 1 < len(tokens) and tokens[i + 1] in _ASPECTS for i in at)


_WHICH_THING = re.compile(r"^\s*(?:which|what)\s+(?!(?:is|was|are|were|do|does|did|has|have|had|kind|sort|type)\b)(?P<thing>[a-z]+)\b", re.I)


def _asks_another_thing(question: str, word: str) -> bool:
    """Whether "which / what <thing> …?" asks for a thing other than `word` or its name ("which school is my daughter
    starting at?" for has_daughter, "what breed is my dog?"); not "what's the name of …", "what pets …"."""
    asked = _WHICH_THING.match(question)
    return asked is not None and _word(asked["thing"].lower().rstrip("s")) not in {word, "name", "pet", "child", "kid"}


def _one_named(term: str, question: str) -> bool:
    """Whether the question says `term` only as one thing named by a name before it ("what make was the boiler at the
    Hendry job?", "the Ferris Lane job"): that one, not the function whose tool the team uses for all of them. A name's
    possessive names whose it is ("Lantern's error tracker"), not which one."""
    at = [m for m in re.finditer(rf"\b{re.escape(term)}s?\b", question, re.I)]
    return bool(at) and all(re.search(r"(?<!^)(?<![.?!]\s)\b(?-i:[A-Z])[\w-]*(?<!['’]s)\s+$", question[: m.start()]) for m in at)


def _said_as_head(term: str, question: str) -> bool:
    """Whether the question says `term` as a thing it asks about, not as a word that qualifies another ("client
    meetings") nor after "with" ("video calls with clients")."""
    tokens = re.findall(r"[a-z0-9_]+", question.lower())
    for i, token in enumerate(tokens):
        if _word(token) != term:
            continue
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if (not after or after in _STOP or after in _ASKS) and (i == 0 or tokens[i - 1] != "with"):
            return True
    return False


def _headed(said: set[str], facts, question: str) -> tuple[str, ...]:
    """No attribute is wholly said: the one whose head (its last content word) the question says,
    "what warehouse do we use?" → data_warehouse_tool, "where's the offsite?" → the offsite named
    most recently (2026_offsite_place over winter_offsite_place); most of its words said first."""
    best, best_score = None, None
    rows = facts.order_by("-valid_from", "-id").values_list("attribute", flat=True)[:2000]
    for recency, attribute in enumerate(dict.fromkeys(rows)):
        words = [_word(w) for w in attribute.split("_")]
        generic = [w for w in words if w in _GENERIC_TERMS]
        content = [w for w in words if w not in _GENERIC_TERMS]
        if len(content) < 2 or content[-1] not in said or (generic and not set(generic) & said and "tool" not in generic):
            continue
        if _qualified_otherwise(question, content):
            continue
        score = (sum(1 for w in content if w in said), -recency)
        if best_score is None or score > best_score:
            best, best_score = attribute, score
    if best is None:
        # "What design tool does Farid use?": a person's favourite of the kind said ("favorite_tool"), when it
        # is their only one; never another function's tool ("which on-call tool?" is not the payment tool)
        family = [a for a in dict.fromkeys(rows) if a.startswith("favorite_") and re.search(rf"\b{a.rsplit('_', 1)[-1]}s?\b", question, re.I)]
        if len(family) == 1:
            best = family[0]
    return (best,) if best else ()


def _about_those_named(scope: Scope, question: str, speaker: str, items: list[RecallItem], said: list[RecallItem]) -> list[RecallItem]:
    """The evidence to quote when nothing answers: when the question names whom it is about, what was said
    first, then the facts about those named (facts about others are left out); else the evidence as recalled."""
    named = {normalize_name(e.name) for e in _subjects(scope, question, speaker)}
    if not named:
        return items
    return list(said) + [i for i in items if i.kind == "fact" and normalize_name(i.subject) in named]


# Words that qualify a head as the team's, as its name would: "our first team retreat" is the first Bramble offsite.
_OURS = frozenset({"team", "team's", "teams", "company", "whole"})


def _qualified_otherwise(question: str, content: list[str]) -> bool:
    """The question and the attribute qualify one head word differently: "which jack-up vessel …?" is not
    asked of crew_transfer_vessel_tool (the question says "jack-up", the attribute "crew transfer", and
    neither says the other's), nor "where do the NA game servers run?" of eu_game_server_tool (they share
    "game"; the question's "NA" is not the attribute's, whose "EU" the question does not say)."""
    tokens = re.findall(r"[a-z0-9][a-z0-9\-]*", question.lower())
    forms = [_word(t) for t in tokens]
    if content[-1] not in forms:
        return False
    own = set(content[:-1])
    unsaid = own - set(forms)
    at = forms.index(content[-1]) - 1
    while at >= 0 and tokens[at] not in _STOP:  # the words that qualify the head in the question, nearest first
        if forms[at] not in own and tokens[at] not in _OURS:
            return bool(unsaid)
        at -= 1
    return False


def _subjects(scope: Scope, question: str, speaker: str) -> list[Entity]:
    """Whom the question is about, in the order it names them: "I" the speaker, "we" / "our" the
    team, else the entities it names."""
    found = []
    if mentions_first_person(question):
        me = speaker_entity(scope, speaker)
        if me is not None:
            found.append(me)
    named = entities_named(scope, question, None)
    text = normalize_name(question)
    named.sort(key=lambda e: min((text.find(normalize_name(a)) for a in e.aliases.values_list("alias", flat=True)
                                  if normalize_name(a) in text), default=len(text)))
    return found + [e for e in named if e not in found]


def _attribute_of_value_named(question: str, facts) -> tuple[str, ...]:
    """"What did we use before Adyen?" names no attribute, but a value: the attribute of the
    fact that holds it (the longest value named, when several are)."""
    text = f" {normalize_name(question)} "
    named = [f for f in facts.exclude(value_normalized="").order_by("-valid_from", "-id")[:2000]
             if f" {f.value_normalized} " in text]
    if not named:
        return ()
    return (max(named, key=lambda f: len(f.value_normalized)).attribute,)


def _valid_at(fact: Fact, moment: datetime) -> bool:
    if fact.valid_to is not None and fact.valid_from is not None and fact.valid_to <= fact.valid_from:
        return False  # corrected: never true
    return (fact.valid_from is None or fact.valid_from <= moment) and (fact.valid_to is None or fact.valid_to > moment)


def _never_true(fact: Fact) -> bool:
    return fact.valid_to is not None and fact.valid_from is not None and fact.valid_to <= fact.valid_from


def _on_topic(question: str, facts: list[Fact]) -> list[Fact]:
    """Of many values ("we decided …"), those sharing most words with the question, newest
    first; all of them when none does (the languages someone speaks)."""
    said = _terms(question)
    scored = [(len(said & _terms(f.value)), f) for f in facts]
    top = max(score for score, _ in scored)
    if top == 0:
        return sorted(facts, key=lambda f: f.value.lower())
    return [next(f for score, f in scored if score == top)]


def _after_answer(question: str, rows: list[Fact], *, you: bool, by_id: dict) -> tuple[str, list[RecallItem]]:
    """"Which wiki did we move to from Confluence?", "what came after Slack?": walk the supersession
    chain forward from the fact with the value named, past values that were corrected away (Coda,
    said by mistake and corrected to Notion, was never the wiki)."""
    text = f" {normalize_name(question)} "
    named = sorted((f for f in rows if normalize_value(f.value) and f" {normalize_value(f.value)} " in text and not _never_true(f)),
                   key=lambda f: (f.valid_from is None, f.valid_from, f.id))
    if not named:
        return "", []
    after = {f.supersedes_id: f for f in rows if f.supersedes_id}
    both = [f for f in named if f.supersedes_id in {n.pk for n in named}]
    if both:  # "when did paging switch from PagerDuty to Opsgenie?": both ends named, the one that followed
        named = [next(n for n in named if n.pk == both[0].supersedes_id)]
    later = after.get(named[0].pk)
    while later is not None and _never_true(later):
        later = after.get(later.pk)
    if later is None:
        return "", []
    who = "you" if you else later.subject.name
    span = f"{began(later) if later.valid_from else '?'} to {said_day(later.valid_to) if later.valid_to else 'now'}"
    line = f"After {named[0].value}: {who} {_label(later)} {later.value} ({span})."
    return line, [by_id.get(str(later.public_id)) or _item(later), by_id.get(str(named[0].public_id)) or _item(named[0])]


def _before_answer(question: str, rows: list[Fact], *, you: bool, by_id: dict) -> tuple[str, list[RecallItem]]:
    """"What did we use before Adyen?": walk the supersession chain back from the fact with the
    value named (or from the current one), past values that were corrected away."""
    text = f" {normalize_name(question)} "
    named = [f for f in rows if normalize_value(f.value) and f" {normalize_value(f.value)} " in text and not _never_true(f)]
    later = named[0] if named else next((f for f in rows if f.status == FactStatus.ACTIVE), None)
    if later is None:
        return "", []
    earlier = later.supersedes
    while earlier is not None and _never_true(earlier):
        earlier = earlier.supersedes
    if earlier is None:
        return "", []
    who = "you" if you else earlier.subject.name
    span = f"{began(earlier) if earlier.valid_from else '?'} to {said_day(earlier.valid_to) if earlier.valid_to else 'now'}"
    # The later value is named when the question named it; else "before" is its day, so the value asked about
    # is the only one offered ("what did the newsletter go out through before the switch?")
    before = later.value if named else (said_day(later.valid_from) if later.valid_from else "then")
    line = f"Before {before}: {who} {_label(earlier)} {earlier.value} ({span})."
    return line, [by_id.get(str(earlier.public_id)) or _item(earlier), by_id.get(str(later.public_id)) or _item(later)]


def _reverse_answer(usable, reverse: tuple[tuple[str, ...], str], *, as_of: datetime | None, by_id: dict) -> tuple[str, list[RecallItem]]:
    """"Who owns billing?": the holder of the fact whose value the question names, now or then."""
    attributes, what = reverse
    before = re.search(r"\s+before\s+(?P<other>.+)$", what, re.I)
    if before:  # "who owned billing before Maya?", "… before March 2026?"
        what = what[: before.start()]
    window = parse_time(what, now=datetime.now().astimezone())
    if window is not None and window.phrase:  # "in 2025", "last spring", "in early 2025": the time, not the thing
        what = re.sub(rf"\s*(?:\b(?:in|during|at|of|since)\s+)?{re.escape(window.phrase)}", "", what, flags=re.I)
    what = re.sub(r"\b(?:now|currently|these days|today|right now|at the moment|still)\b", "", what, flags=re.I)
    what = re.sub(r"\b(?:in|during)\s+(?:\w+\s+)?\d{4}\b.*$", "", what)
    held = usable.filter(attribute__in=attributes).order_by("-valid_from", "-id")[:500]
    # "who is the release manager for Saltglass?": the role said whole, else without what it is for
    for said in dict.fromkeys([what, re.sub(r"\s+(?:for|of|at|on)\s+.+$", "", what)]):
        wanted = _terms(said)
        rows = [f for f in held if wanted and wanted <= _terms(f.value) | _terms(f.value + " service team")]
        if rows:
            break
    if before:
        return _holder_before(rows, before["other"], by_id=by_id)
    rows = [f for f in rows if (_valid_at(f, as_of) if as_of is not None else f.status == FactStatus.ACTIVE)]
    if not rows:
        return "", []
    fact = min(rows, key=lambda f: attributes.index(f.attribute))  # the owner before a lead, each newest first
    line = f"{fact.subject.name} {_label(fact)} {fact.value}{_since(fact)}."
    if as_of is not None:
        line = f"As of {said_day(as_of)}: {line}"
    return line, [by_id.get(str(fact.public_id)) or _item(fact)]


def _holder_before(rows: list[Fact], other: str, *, by_id: dict) -> tuple[str, list[RecallItem]]:
    """"Who owned billing before Maya?": the holder just before the one named, in the order the
    facts became true (corrected facts were never true); "before March 2026": the holder then."""
    rows = sorted((f for f in rows if not _never_true(f)), key=lambda f: (f.valid_from is None, f.valid_from, f.id))
    named = normalize_name(other)
    later = [i for i, f in enumerate(rows) if normalize_name(f.subject.name) == named]
    if later:
        earlier = rows[later[-1] - 1] if later[-1] > 0 else None
    else:
        window = parse_time(other, now=datetime.now().astimezone())
        if window is None or window.start is None:
            return "", []
        held = [f for f in rows if _valid_at(f, window.start - timedelta(microseconds=1))]
        earlier = held[-1] if held else None
    if earlier is None:
        return "", []
    span = f"{began(earlier)} to {said_day(earlier.valid_to) if earlier.valid_to else 'now'}"
    line = f"Before {other.strip(' ?')}: {earlier.subject.name} {_label(earlier)} {earlier.value} ({span})."
    return line, [by_id.get(str(earlier.public_id)) or _item(earlier)]


def _label(fact: Fact) -> str:
    if fact.attribute.endswith("_tool"):
        return f"used for {fact.attribute.removesuffix('_tool').replace('_', ' ')}:"
    return {"lives_in": "lived in" if fact.status != FactStatus.ACTIVE else "lives in", "works_at": "worked at",
            "reports_to": "reports to", "owns": "owns", "leads": "leads"}.get(fact.attribute, fact.attribute.replace("_", " ") + ":")


_NOW_WORDS = re.compile(r"\b(?:these\s+days|nowadays|at\s+the\s+moment|right\s+now|currently)\b", re.I)


# Someone who says they are the one to go to ("please ask me first", "book it through me", "questions come to me").
_ASK_ME = re.compile(r"\b(?:ask|through|via|contact|ping|email|message|see|with|past|come to|talk to|speak to|go to|check with)\s+me\b", re.I)


def _evidence_answer(question: str, items: list[RecallItem], *, scope: Scope | None = None, current: bool = True,
                     asker: str = "") -> tuple[str, RecallItem | None]:
    """When no fact answers but what was said does ("We moved our CI from Jenkins to GitHub
    Actions" for "what CI do we use?"): the sentence of the evidence sharing most content words
    with the question; the answer's first line is the span of it that answers ("GitHub Actions",
    `_answering_span`), then the sentence quoted with who said it and when. The question's words of
    time ("these days", "nowadays") say when, not what: they only break ties between sentences
    ("… living in Northampton these days" is not chosen for "who looks after the carrier integrations
    these days?", but "I look after X these days" is over "the flat looks out on …"). A question in the first person
    singular ("where do I live?") asked by `asker` is answered only by what the asker said, or what names them: "gus
    lives in Elmwood" is no answer to anyone else's "where do I live?", but "please ask me first" answers "who do I ask?"."""
    said_all = _terms(question) - _GENERIC_TERMS
    said = (_terms(_NOW_WORDS.sub(" ", question)) - _GENERIC_TERMS) or said_all
    if not said:
        return "", None
    scored = []
    mine = asker.strip().casefold() if asker and mentions_first_person(question) else ""
    who = expected_kind(question) == "person"
    # "What is Tom's wife called?": what Tom said, or what names him; never another's wife ("sanjay's wife is Anjali")
    owners = {name.casefold() for name in re.findall(r"\b([A-Z][\w-]+)['’]s\b", question)}
    owners &= {(item.speaker or "").casefold() for item in items}  # of those who speak in the evidence
    for rank, item in enumerate(items):
        if owners and not _by_or_naming(item, owners):
            continue  # someone else's words about someone else
        if mine and not _by_or_naming(item, {mine}) and not (who and _ASK_ME.search(item.text or "")):
            continue  # someone else's words about someone else (not "please ask me first" for "who do I ask?")
        for sentence in _sentences_of(item.text):
            terms = _terms(sentence)
            if owners and (item.speaker or "").casefold() in owners:
                terms |= _terms(item.speaker)  # "my cat is Pixel", said by Mei, is about Mei's cat
            scored.append((len(said & terms), -rank, sentence.strip(), item, len(said_all & terms), sentence.rstrip().endswith("?")))
    scored.sort(key=lambda c: (c[0], c[4], c[1]), reverse=True)  # the words of time only break ties
    # A question says no value, unless a reply answered it with one ("the deposit is $150 right?" – "$200 Nico"):
    # it answers only as corrected, and is never quoted alone.
    stated = [c for c in scored if not c[5]]
    top = (stated or scored)[0][0] if scored else 0
    if top < min(2, len(said_all)):  # a question of one word and "these days" is still two to match
        return "", None
    # The best sentence that answers with a value still held: of those sharing as many words, or one fewer, with
    # the question, the first whose span is found ("9 December for the beta, not 2 December" over the sentence
    # that only says 2 December, superseded since); else the best one, quoted.
    best, best_item, span, correction, best_meant = (stated[0][2], stated[0][3], "", None, stated[0][2]) if stated else ("", None, "", None, "")
    looked = {False: 0, True: 0}  # the best six statements, and up to three questions among them
    for _, _, sentence, item, _, asked in (c for c in scored if c[0] >= max(top - 1, min(2, len(said_all)))):
        looked[asked] += 1
        if looked[False] > 6:
            break
        if asked and looked[True] > 3:
            continue
        meant, later = _as_corrected(scope, item, sentence)
        if asked and later is None:
            continue
        if found := _answering_span(question, meant, item, scope=scope, asker=mine):
            best, best_item, span, correction, best_meant = sentence, item, found, later, meant
            break
    if best_item is None:
        return "", None
    if not span and correction is None:
        # No span of what the best sentence says, but a correction of it: the value the correction put in
        # ("guest wifi password is hedgehog42", then "lol no sorry it's hedgehog24": "hedgehog24")
        best_meant, correction = _as_corrected(scope, best_item, best)
        span = _put_in(best, best_meant, question) if correction is not None else ""
    who = f"{best_item.speaker} said" if getattr(best_item, "speaker", "") else "It was said"
    when = f" on {said_day(best_item.occurred_at)}" if best_item.occurred_at else ""
    corrected = correction.text.strip() if correction is not None else ""
    before = bool(_ASKS_BEFORE.search(question))  # "who did they report to before Kasia?": "…, not Tom" is the answer
    if span and (current or correction is not None or (_SAID_WRONG.search(best) and not before)):
        # A value the quote itself says is gone (or that a correction replaced) is not offered beside the current one;
        # a question about what was keeps what the sentence says was (never what a correction said was wrong, even
        # asked as of a time: "who was the locum in November?" after "…Baird", "correction: Laird. Not Baird").
        gone = _corrected_away(best, best_meant) if correction is not None else set()
        past = bool(_ASKS_PAST.search(question)) or not current or before
        best, corrected = (_current_quoted(text, span=span, scope=scope, gone=gone, past=past, before=before) for text in (best, corrected))
    quote = f'{who}{when}: "{best}"'
    if correction is not None:
        by = f" by {correction.speaker}" if correction.speaker and correction.speaker != best_item.speaker else ""
        quote += f', corrected{by} on {said_day(correction.occurred_at)}: "{corrected}"'
    return (f"{span}\n{quote}" if span else quote), best_item


# A question about what was, not what is (said in the past tense, or naming a time before): its quote may name the
# old values ("which password manager did we only pilot?").
_ASKS_PAST = re.compile(r"\b(?:did|was|were|had|before|previous(?:ly)?|used to|formerly|originally|earlier|prior|until|first|old|from)\b", re.I)
# A phrase a sentence says is gone or not the one ("switching from Zoom to Teams", "moving off InDesign", "in the
# security office, not the corridor", "reports to Ines rather than Declan", "better than the paper forms"): the
# shortest run of up to four words after the mark that ends at punctuation or at a word that opens another phrase.
_GONE_PHRASE = re.compile(
    r"\b(?P<mark>from|off|not|instead of|rather than|than|replacing|ditching|ditched|dropping|dropped|no more)\s+(?:(?:the|our|a|an|that)\s+)?"
    r"(?P<what>[\w&'.£$€%\-]+(?:\s+[\w&'.£$€%\-]+){0,3}?)"
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:to|onto|into|and|or|for|in|on|at|with|so|but|as|because|was|were|is|are|has|had|will|by|from|since|until|now|this|next|any|all)\b)",
    re.I,
)
_NOT_GONE = re.compile(r"\b(?:now|today|tomorrow|then|home|here|there|scratch|time|me|you|us|him|her|them|it|sure|yet|just|only|really|too|so|very)\b", re.I)


# "… not monday", "… not the Hilton": a value said as wrong in the sentence itself, elided whatever the question asks.
_ASKS_BEFORE = re.compile(r"\b(?:before|previous(?:ly)?|used to|originally|formerly)\b", re.I)
_SAID_WRONG = re.compile(rf"\bnot\s+(?:the\s+|our\s+)?(?:[A-Z0-9£$€]|{WEEKDAY_SAID})")


def _by_or_naming(item: RecallItem, names: set[str]) -> bool:
    """Whether one of `names` (casefolded) said the item, or the item names them."""
    return (item.speaker or "").casefold() in names or any(re.search(rf"\b{re.escape(name)}\b", (item.text or "").casefold()) for name in names)


def _current_quoted(sentence: str, *, span: str, scope: Scope | None, gone: set[str], past: bool = False, before: bool = False) -> str:
    """`sentence` quoted for an answer whose value is `span`, with each value it says is gone elided ("…"):
    a phrase after from / off / not / rather than / than … (`_GONE_PHRASE`; after "from", "off" and "than" not a
    date: "from 1 May"), a value `gone` (replaced by a correction), and a capitalised value the scope holds only as
    superseded or corrected. The span itself is never elided. A superseded value is not offered as current.
    `past`: the question asks what was ("how many did we order?"): only what a correction replaced is elided, the
    sentence's old values stay, but not one said as wrong ("tuesday 19th not monday"), unless the question asks what came
    `before` ("who did they report to before Kasia?": "…, not Tom" is its answer)."""
    wanted = set(normalize_name(span).split())
    cuts = []
    for match in _GONE_PHRASE.finditer(sentence):
        what, mark = match["what"], match["mark"].lower()
        if past and (mark != "not" or before):
            continue  # asked what was: only a value said as wrong ("tuesday 19th not monday") is elided
        if _NOT_GONE.search(what) or (mark in ("from", "off", "than") and (re.match(r"\d", what) or parse_time(what, now=datetime.now().astimezone()))):
            continue
        if mark == "not" and not re.match(rf"(?:the|our|a|an|that)\s|[A-Z0-9£$€]|{WEEKDAY_SAID}", match[0][len(match["mark"]):].strip()):
            continue  # "not ready", "not kick": no value said ("not monday" is one, in lowercase chat too)
        cuts.append(match.span("what"))
    for match in _CAPITALISED_RUN.finditer(sentence):
        phrase = match[0].strip(" .,'")
        if phrase and (normalize_name(phrase) in gone or (not past and match.start() > 0 and phrase[:1].isalpha() and _only_past(scope, phrase))):
            cuts.append((match.start(), match.start() + len(match[0].rstrip(" .,'"))))
    for value in gone | (set() if past else _past_values_in(sentence, scope)):
        cuts += [m.span() for m in re.finditer(rf"(?<![\w]){re.escape(value)}(?![\w])", sentence, re.I)]
    out, end = [], 0
    for start, stop in sorted(cuts):
        if start < end or set(normalize_name(sentence[start:stop]).split()) & wanted:
            continue
        out += [sentence[end:start], "…"]
        end = stop
    return "".join(out) + sentence[end:]


def _put_in(said: str, meant: str, question: str) -> str:
    """The words a correction put in `said` to make `meant` (whole words: "hedgehog42" → "hedgehog24", "the red tin" →
    "the blue tin": "blue"), or "" when they are none, or no answer of the kind the question asks for (a date)."""
    start = len(os.path.commonprefix([said, meant]))
    tail = len(os.path.commonprefix([said[start:][::-1], meant[start:][::-1]]))
    end = len(meant) - tail
    while start > 0 and (meant[start - 1].isalnum() or meant[start - 1] in "'-"):
        start -= 1
    while end < len(meant) and (meant[end].isalnum() or meant[end] in "'-"):
        end += 1
    put = meant[start:end].strip(" ,.;:!?")
    if not put or len(put.split()) > 6 or (expected_kind(question) == "date" and not holds_date(put)):
        return ""
    return put


def _corrected_away(said: str, meant: str) -> set[str]:
    """The words a correction replaced: those of `said` that `meant` (the sentence as corrected) no longer has
    ("quarantine room G07" → "quarantine room G09": {"g07"})."""
    kept = set(normalize_name(meant).split())
    return {w for w in normalize_name(said).split() if w not in kept and (w.isdigit() or (len(w) > 1 and w not in _STOP))}


def _as_corrected(scope: Scope | None, item: RecallItem, sentence: str) -> tuple[str, "Episode | _Said | None"]:
    """`sentence` as a short correction said soon after it (later in the same message, `_corrected_within`, else among
    the scope's next CORRECTION_AMONG episodes within CORRECTION_WITHIN) says it should have been ("we bought 120 new CT40s", then
    "sorry, 150": "we bought 150 new CT40s"; or one said as a whole statement naming the wrong value, `amend.restated`; or
    one that sets the new value beside the old, "sorry — CROWN. ardagh was the other quote", `contrast.contrasted`),
    with the correction's episode;
    else the sentence as said and None. Any speaker may correct (`amend.amended` decides whether
    the later text corrects this sentence at all)."""
    if item.kind != "fact" and (corrected := _corrected_within(item, sentence)) is not None:
        return corrected
    episode_id = (item.source or {}).get("episode")
    if scope is None or not episode_id or item.kind == "fact":
        return sentence, None
    said = Episode.objects.filter(scope=scope, public_id=episode_id).values("pk", "occurred_at", "speaker").first()
    if said is None:
        return sentence, None
    later = (Episode.objects.filter(scope=scope, occurred_at__lte=said["occurred_at"] + CORRECTION_WITHIN)
             .filter(Q(occurred_at__gt=said["occurred_at"]) | Q(occurred_at=said["occurred_at"], pk__gt=said["pk"]))
             .order_by("occurred_at", "pk")[:CORRECTION_AMONG])
    between: list[tuple[str, str]] = []
    for episode in later:
        if meant := (amended(sentence, episode.text, same_speaker=episode.speaker == said["speaker"], previous_speaker=said["speaker"], contrast=False)
                     or restated(sentence, episode.text) or contrasted(sentence, episode.text)):
            if not any(holds_shape(text, episode.text, previous_speaker=by) for text, by in between):
                return meant, episode  # about this sentence, not a statement in between
        between.append((episode.text, episode.speaker))
    return sentence, None


def _sentences_of(text: str | None) -> list[str]:
    """A message's sentences as the answers read them: the evidence is scored, and corrected, sentence by sentence."""
    return re.split(r"(?<=[.!?])\s+", text or "")


@dataclass(frozen=True)
class _Said:
    """A sentence of a message, as a correction's quote needs it (who said it and when)."""
    text: str
    speaker: str
    occurred_at: datetime | None


def _corrected_within(item: RecallItem, sentence: str) -> tuple[str, _Said] | None:
    """`sentence` as a later sentence of the same message corrects it ("Saturday paper is 48 pages this week.
    Correction, 56, not 48", "Guest wifi is CourierGuest. Sorry, HarbourGuest!"), with that sentence; the extractor
    reads the message so (`offline._self_corrected`). A sentence in between that holds what the correction is about
    is the one it corrects. None when no later sentence corrects it."""
    said = [s.strip() for s in _sentences_of(item.text) if s.strip()]
    try:
        at = said.index(sentence.strip())
    except ValueError:
        return None
    for index in range(at + 1, len(said)):
        if (meant := amended(sentence, said[index])) is not None:
            if any(holds_shape(between, said[index]) for between in said[at + 1:index]):
                return None
            return meant, _Said(text=said[index], speaker=item.speaker or "", occurred_at=item.occurred_at)
    return None


# Words after which a value is the old or the wrong one, not the answer.
_NOT_CURRENT = re.compile(r"\b(?:from|not|instead of|replaced|replacing|left|leaving|dropped|dropping|ditched|ditching|binned|binning|scrapped|"
                          r"scrapping|cancelled|cancelling|retired|retiring|off|used to|no longer|formerly|previously|before)\s+$", re.I)
_CAPITALISED_RUN = re.compile(r"(?<![\w'])(?:[A-Z0-9][\w.&+'-]*)(?:\s+(?:[A-Z0-9][\w.&+'-]*|(?:of|de|la|du)\b))*(?:\s+[A-Z0-9][\w.&+'-]*)?")


def _answering_span(question: str, sentence: str, item: RecallItem, *, scope: Scope | None, asker: str = "") -> str:
    """The words of `sentence` that answer `question`: the value of the fact the offline
    extractor reads in it whose attribute the question names (the one reading of sentence
    structure, `memories.extraction.offline`); else the first capitalised phrase the question
    does not say and no "from" / "not" marks as the old value. Never a value the scope holds
    only as superseded or corrected, nor the name of the `asker` who asks about themself ("where did I grow up?")."""
    from django.utils import timezone

    from memories.extraction.offline import extract
    from memories.services.resolve import team_name

    said = _terms(question) - _GENERIC_TERMS
    team = team_name(scope) if scope is not None else None
    if expected_kind(question) == "date":  # "when …?": a date said in the sentence, or none (a name is no answer)
        verb = [w for w in re.findall(r"[a-z]+", question.lower()) if w not in _STOP]
        return date_span(sentence, item.occurred_at, near={_word(verb[-1])} if verb else set())
    if (day := day_span(question, sentence, item.occurred_at)) is not None:
        return day  # "what day of the week …?" a weekday, "what day in July …?" the date
    people = scope_speakers(scope) if scope is not None else ()  # the speakers of what was indexed: what recall quotes
    extraction = extract(text=sentence, speaker=item.speaker or "user", occurred_at=item.occurred_at or timezone.now(), team=team, people=people)
    candidates, kind = [], expected_kind(question)
    for fact in extraction.facts:
        if fact.negated or (kind == "place" and only_when(fact.value)):
            continue  # "where …?" is not answered by when ("Friday 9 July at the Corn Exchange")
        words = {_word(w) for w in fact.attribute.split("_")} - _GENERIC_TERMS
        overlap = len(words & said)
        if overlap:
            candidates.append((overlap, fact.value))
    if candidates:
        value = max(candidates, key=lambda c: c[0])[1]
        if not _only_past(scope, value):
            return value
    question_words = set(normalize_name(question).split()) | ({normalize_name(asker)} if asker else set())
    if how_many := re.match(r"^\s*how\s+(?:many|much)\s+(?P<what>\w+)", question, re.I):
        # "how many languages …?" → "8 languages": the number the sentence says, with what it counts
        for number in re.finditer(r"(?<![\w.])[$€£]?\d[\d,.]*(?:\s+[a-z]+)?", sentence):
            if normalize_name(number[0].split()[0]) not in question_words:
                return number[0].strip(" .,")
        return ""  # a name is no answer to "how many"
    found = []
    for match in _CAPITALISED_RUN.finditer(sentence):
        phrase = match.group(0).strip(" .,'")
        if not phrase or _NOT_CURRENT.search(sentence[: match.start()]):
            continue
        if match.start() == 0 and phrase.split()[0].lower() in NOT_NAMES:
            phrase = " ".join(phrase.split()[1:])  # "The …", "We …": capitalised as the sentence's first word
        if re.match(r"I(?:'\w+)?(?:\s|$)", phrase):
            phrase = " ".join(phrase.split()[1:])  # "I", "I'm": the speaker, capitalised anywhere, is no answer
        if not phrase or set(normalize_name(phrase).split()) <= question_words or _only_past(scope, phrase):
            continue
        if kind == "place" and (re.fullmatch(r"[\d.,]+", phrase) or only_when(phrase)):
            continue  # "quay 3", "unit 4": a number alone is no place; "Friday 9 July" is when, not where
        found.append((match.start() == 0, phrase))  # the first word is capitalised anyway: taken last
    if found:
        return min(found, key=lambda f: f[0])[1]
    return ""


def _past_values_in(sentence: str, scope: Scope | None) -> set[str]:
    """The values of up to three words `sentence` says, in any case, that the scope holds only as no longer true
    ("ditched lightning labels — inland label does all our can labels now": lightning labels, superseded)."""
    words = normalize_name(sentence).split()
    said = {" ".join(words[i:i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
    if scope is None or not said:
        return set()
    rows = Fact.objects.in_scope(scope).filter(value_normalized__in=said, object_entity__isnull=False).values_list("value_normalized", "status")
    held: dict[str, set[str]] = {}
    for value, status in rows[:500]:
        held.setdefault(value, set()).add(status)
    return {value for value, statuses in held.items() if FactStatus.ACTIVE not in statuses}


def _only_past(scope: Scope | None, value: str) -> bool:
    """True when the scope holds `value` only in facts that are no longer (or never were) true."""
    if scope is None:
        return False
    rows = list(Fact.objects.in_scope(scope).filter(value_normalized=normalize_value(value)).values_list("status", flat=True)[:50])
    return bool(rows) and FactStatus.ACTIVE not in rows


def _since(fact: Fact) -> str:
    return f" (since {began(fact)})" if fact.valid_from else ""


def began(fact: Fact) -> str:
    """When `fact` began, as `said_day` writes it, except that the first of a month at midnight is the day itself, not the
    month, when the statement the fact came from names that day ("from 1 December", "on July 1st")."""
    moment = fact.valid_from
    if moment is None or said_day(moment) == f"{moment.day} {calendar.month_name[moment.month]} {moment.year}" or not fact.source_episode_id:
        return said_day(moment)
    said = Episode.objects.filter(pk=fact.source_episode_id).values_list("text", flat=True).first() or ""
    month = calendar.month_name[moment.month]
    if re.search(rf"(?<![\d/])1(?:st)?\s+(?:of\s+)?{month[:3]}[a-z]*\b|\b{month[:3]}[a-z]*\.?\s+1(?:st)?(?![\d/])", said, re.I):
        return f"1 {month} {moment.year}"
    return said_day(moment)


def _sentence(facts: list[Fact], *, you: bool) -> str:
    who = "You" if you else facts[0].subject.name
    be = "are" if you else "is"
    by = {f.attribute: f for f in facts}
    if "lives_in" in by:
        f = by["lives_in"]
        return f"{who} {'live' if you else 'lives'} in {f.value}{_since(f)}."
    if "role" in by or "works_at" in by:
        role, employer = by.get("role"), by.get("works_at")
        if role and employer:
            return f"{who} {be} {_article(role.value)}{role.value} at {employer.value}{_since(role)}."
        if role:
            return f"{who} {be} {_article(role.value)}{role.value}{_since(role)}."
        return f"{who} {'work' if you else 'works'} at {employer.value}{_since(employer)}."
    parts = [f"{f.attribute.replace('_', ' ')}: {f.value}{_since(f)}" for f in facts]
    return f"{who}: " + "; ".join(parts) + "."


def _article(value: str) -> str:
    lowered = value.lower()
    if lowered.startswith(("a ", "an ", "the ")):
        return ""
    return "an " if lowered[:1] in "aeiou" else "a "


def _history_answer(question: str, rows: list[Fact], *, you: bool, by_id: dict) -> tuple[str, list[RecallItem]]:
    """"Did I ever live in San Francisco?": yes with the interval when a fact (of any status)
    has a value the question names; otherwise what is known."""
    text = normalize_name(question)
    named = [f for f in rows if normalize_value(f.value) and normalize_value(f.value) in text]
    who = "you" if you else rows[0].subject.name
    corrected = [f for f in named if _never_true(f)]
    named = [f for f in named if not _never_true(f)]
    if corrected and not named:
        # "Was our warehouse ever Redshift?" when Redshift was said by mistake and corrected
        wrong = corrected[0]
        right = next((f for f in rows if f.supersedes_id == wrong.pk), None)
        line = f"No: {wrong.value} was said by mistake and corrected" + (f" to {right.value}." if right else ".")
        used = [wrong] + ([right] if right else [])
        return line, [by_id.get(str(f.public_id)) or _item(f) for f in used]
    if named:
        fact = sorted(named, key=lambda f: (f.valid_from is None, f.valid_from))[0]
        verb = {"lives_in": "lived in", "works_at": "worked at", "role": "were" if you else "was"}.get(fact.attribute, fact.attribute.replace("_", " "))
        if fact.status == FactStatus.ACTIVE:
            current = _sentence([fact], you=you)
            line = f"Yes: {current[0].lower() + current[1:] if you else current}"
        else:
            line = f"Yes: {who} {verb} {fact.value} from {said_day(fact.valid_from)} to {said_day(fact.valid_to)}."
        return line[0].upper() + line[1:], [by_id.get(str(fact.public_id)) or _item(fact)]
    values = ", ".join(sorted({f.value for f in rows}))
    return f"Not that I know of. What I know: {values}.", [by_id.get(str(f.public_id)) or _item(f) for f in rows[:3]]


def _item(fact: Fact) -> RecallItem:
    return RecallItem(
        kind="fact", id=str(fact.public_id), text=fact.sentence, score=0.0, lanes={}, status=fact.status,
        valid_from=fact.valid_from, valid_to=fact.valid_to, occurred_at=fact.valid_from, subject=fact.subject.name,
        attribute=fact.attribute, value=fact.value, pk=fact.pk, why=["holds the attribute asked about"],
    )


def history(*, scope: Scope, entity: str, attribute: str | None = None) -> list[Fact]:
    """Every fact about `entity` (by name, alias or id), whatever its status, oldest first: what
    was true when."""
    from memories.services.facts import fact_history

    return list(fact_history(scope=scope, entity_name_or_id=entity, attribute=attribute))
