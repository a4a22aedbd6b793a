"""Who reads an episode: the offline rules, or a language model through the client in force.

Both give the same `Extraction` and answer reconcile questions the same way, so
`memories.services.extract` does not care which it has. With a model, this module builds the
prompts (`prompts.py`), asks the client for JSON of the schema (the client validates it and
re-asks on an invalid reply) and tidies what models get wrong without being invalid. Offline,
the rules read the text and make no reconcile decisions: `decide` returns None, meaning "the
attribute decides" (`vocabulary.is_single_valued`).
"""

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Protocol

from memoryweb.providers.llm import LLM, get_llm
from memories.extraction import offline
from memories.extraction.lexicon import SPEAKER_REFERENCES, TEAM_WORDS
from memories.extraction.prompts import decide_prompt, decide_system, extraction_prompt, extraction_system
from memories.extraction.schemas import ExtractedEntity, ExtractedFact, Extraction, ReconcileDecision


class Extractor(Protocol):
    name: str
    is_offline: bool

    def extract(self, *, text: str, speaker: str, occurred_at: datetime, team: str | None = None, people: Iterable[str] = ()) -> Extraction: ...

    def decide(self, *, fact: ExtractedFact, candidates: list[dict]) -> ReconcileDecision | None: ...


class OfflineExtractor:
    """The rule-based English extractor (`memories.extraction.offline`); no model."""

    name = "offline"
    is_offline = True

    def extract(self, *, text: str, speaker: str, occurred_at: datetime, team: str | None = None, people: Iterable[str] = ()) -> Extraction:
        return offline.extract(text=text, speaker=speaker, occurred_at=occurred_at, team=team, people=people)

    def decide(self, *, fact: ExtractedFact, candidates: list[dict]) -> ReconcileDecision | None:
        return None


class ModelExtractor:
    """Extraction and reconcile decisions asked of a language model."""

    is_offline = False

    def __init__(self, *, llm: LLM):
        self.llm = llm
        self.name = llm.name

    def extract(self, *, text: str, speaker: str, occurred_at: datetime, team: str | None = None, people: Iterable[str] = ()) -> Extraction:
        user = extraction_prompt(text=text, speaker=speaker, occurred_at=occurred_at, team=team)
        extraction = self.llm.complete_json(system=extraction_system(), user=user, schema=Extraction)
        return extraction_tidied(extraction=extraction, speaker=speaker, occurred_at=occurred_at, team=team)

    def decide(self, *, fact: ExtractedFact, candidates: list[dict]) -> ReconcileDecision:
        """ADD / UPDATE / DELETE / NOOP for `fact` against `candidates` ([{id, attribute, value,
        sentence}]). With no candidates there is nothing to weigh: ADD (NOOP for a negated fact,
        which has nothing to retract) without asking the model."""
        if not candidates:
            if fact.negated:
                return ReconcileDecision(action="NOOP", reason="nothing active to retract")
            return ReconcileDecision(action="ADD", reason="no similar active facts")
        ids = {str(c["id"]) for c in candidates}

        def check(decision: ReconcileDecision) -> str | None:
            if decision.action != "ADD" and decision.target_fact_id not in ids:
                return f"target_fact_id must be one of {sorted(ids)} for {decision.action}, not {decision.target_fact_id!r}"
            return None

        user = decide_prompt(fact=fact, candidates=candidates)
        decision = self.llm.complete_json(system=decide_system(), user=user, schema=ReconcileDecision, check=check)
        if decision.action == "ADD":
            decision.target_fact_id = None
        return decision


def extractor_get() -> Extractor:
    """The extractor for the language model in force (LLM_PROVIDER). Raises LLMError when the
    configuration cannot work."""
    llm = get_llm()
    return OfflineExtractor() if llm.is_offline else ModelExtractor(llm=llm)


def extraction_tidied(*, extraction: Extraction, speaker: str, occurred_at: datetime, team: str | None = None) -> Extraction:
    """What models get wrong without being invalid: "I" or "we" as a subject (the speaker; "we"
    the team in a team's scope), dates without a time zone, entities they forgot to list, a tool
    attribute spelt by its function ("payment_provider")."""
    speaker = (speaker or "").strip() or "user"
    team = (team or "").strip() or None
    tz = occurred_at.tzinfo or UTC

    def who(name: str) -> str:
        key = name.strip().lower()
        if key in TEAM_WORDS:
            return team or speaker
        return speaker if key in SPEAKER_REFERENCES else name

    def aware(value: datetime | None) -> datetime | None:
        return value.replace(tzinfo=tz) if value is not None and value.tzinfo is None else value

    facts = []
    for fact in extraction.facts:
        facts.append(fact.model_copy(update={"subject": who(fact.subject), "valid_from": aware(fact.valid_from)}))
    entities, known = [], set()
    for entity in extraction.entities:
        name = who(entity.name)
        if name.lower() not in known:
            entities.append(entity.model_copy(update={"name": name}))
            known.add(name.lower())
    for fact in facts:
        if fact.subject.lower() not in known:
            kind = "organization" if team and fact.subject == team else "person"
            entities.append(ExtractedEntity(name=fact.subject, kind=kind, role="actor"))
            known.add(fact.subject.lower())
        if fact.object_entity and fact.object_entity.lower() not in known:
            role = "location" if fact.object_kind == "place" else "object"
            entities.append(ExtractedEntity(name=fact.object_entity, kind=fact.object_kind, role=role))
            known.add(fact.object_entity.lower())
    return extraction.model_copy(update={"facts": facts, "entities": entities, "occurred_at": aware(extraction.occurred_at)})
