"""answer and history.

`answer` gathers evidence with `recall_evidence` and, with a language model, asks it to answer
only from that evidence and to cite the ids it used. Offline (or when the model fails), it
answers from the facts themselves: when an active fact holds the attribute the question asks
about ("where do I live?" → lives_in) it says so in one line, and it always returns the best
facts and evidence, quoted, so a person can judge.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, Field

from memoryweb.errors import InvalidInput
from memories.models import Entity, Fact, FactStatus, Scope
from memories.normalize import normalize_name, normalize_value
from retrieval.intents import asks_history, attributes_asked, mentions_first_person
from retrieval.search import RecallItem, RecallResult, recall_evidence
from retrieval.search.question import entities_named, speaker_entity

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
    result = recall_evidence(scope=scope, query=question, k=k, speaker=speaker, now=now)
    facts = [item for item in result.items if item.kind == "fact"]
    direct, used = _direct_answer(scope=scope, question=question, speaker=speaker, facts=facts)
    offline = Answer(
        question=question, text=direct or _quoted(result.items), evidence=result.items, facts_used=used or facts[:3],
        citations=[item.id for item in (used or result.items[:3])], recall=result,
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
        reply = llm.complete_json(system=SYSTEM, user=_prompt(question, result.items), schema=ModelAnswer)
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


def _prompt(question: str, items: list[RecallItem]) -> str:
    lines = []
    for item in items:
        when = ""
        if item.kind == "fact":
            when = f" (valid {_day(item.valid_from)} – {_day(item.valid_to) if item.valid_to else 'now'}, {item.status})"
        elif item.occurred_at:
            when = f" ({_day(item.occurred_at)}{', ' + item.speaker if item.speaker else ''})"
        lines.append(f"[{item.id}] {item.kind}{when}: {item.text}")
    return "Evidence:\n" + "\n".join(lines) + f"\n\nQuestion: {question}"


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment else "?"


def _quoted(items: list[RecallItem]) -> str:
    if not items:
        return "I don't know: nothing in this memory matches."
    lines = ["I found no fact that answers this directly. The closest memories:"]
    for item in items[:3]:
        lines.append(f'- "{item.text}" ({item.kind}{", " + _day(item.occurred_at) if item.occurred_at else ""})')
    return "\n".join(lines)


def _direct_answer(*, scope: Scope, question: str, speaker: str, facts: list[RecallItem]) -> tuple[str, list[RecallItem]]:
    """One line from the facts when the question asks for an attribute a fact holds."""
    attributes = attributes_asked(question)
    if not attributes:
        return "", []
    subject = _subject(scope, question, speaker)
    candidates = (
        Fact.objects.in_scope(scope).filter(attribute__in=attributes)
        .exclude(status__in=[FactStatus.RETRACTED, FactStatus.HELD]).select_related("subject")
    )
    if subject is not None:
        candidates = candidates.filter(subject=subject)
    rows = list(candidates.order_by("-valid_from", "-id")[:50])
    if not rows:
        return "", []
    you = subject is not None and mentions_first_person(question)
    by_id = {item.id: item for item in facts}
    if asks_history(question):
        return _history_answer(question, rows, you=you, by_id=by_id)
    active = [f for f in rows if f.status == FactStatus.ACTIVE]
    if not active:
        return "", []
    # One active fact per asked attribute (the newest), in the order the attributes are listed.
    chosen = []
    for attribute in attributes:
        for fact in active:
            if fact.attribute == attribute:
                chosen.append(fact)
                break
    if not chosen:
        return "", []
    return _sentence(chosen, you=you), [by_id.get(str(f.public_id)) or _item(f) for f in chosen]


def _subject(scope: Scope, question: str, speaker: str) -> Entity | None:
    if mentions_first_person(question):
        return speaker_entity(scope, speaker)
    named = entities_named(scope, question, None)
    return named[0] if named else None


def _since(fact: Fact) -> str:
    return f" (since {_day(fact.valid_from)})" if fact.valid_from else ""


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
    if named:
        fact = sorted(named, key=lambda f: (f.valid_from is None, f.valid_from))[0]
        verb = {"lives_in": "lived in", "works_at": "worked at", "role": "were" if you else "was"}.get(fact.attribute, fact.attribute.replace("_", " "))
        if fact.status == FactStatus.ACTIVE:
            current = _sentence([fact], you=you)
            line = f"Yes: {current[0].lower() + current[1:] if you else current}"
        else:
            line = f"Yes: {who} {verb} {fact.value} from {_day(fact.valid_from)} to {_day(fact.valid_to)}."
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
