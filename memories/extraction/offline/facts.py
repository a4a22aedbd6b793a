"""Facts as the rules give them: sentence templates, importance by attribute, the cap per text,
and the entities the facts name."""

from memories.extraction.offline.context import Clause, Context
from memories.extraction.schemas import ExtractedEntity, ExtractedFact
from memories.extraction.vocabulary import REPLACEMENT_ATTRIBUTE

MAX_FACTS = 25  # per text: a long chat turn should not flood the memory with guesses

# Importance by attribute: life events high (≥ 0.75 ignores recency decay), preferences medium.
_IMPORTANCE = {
    "lives_in": 0.85, "works_at": 0.85, "role": 0.8, "spouse": 0.85, "partner": 0.8,
    "has_child": 0.85, "has_son": 0.85, "has_daughter": 0.85, "number_of_children": 0.8,
    "relationship_status": 0.8, "birth_date": 0.8, "born_in": 0.75, "studies_at": 0.75,
    "studies": 0.7, "graduated_from": 0.75, "is_from": 0.75, "grew_up_in": 0.75,
    "mother": 0.75, "father": 0.75, "has_sister": 0.75, "has_brother": 0.75, "has_pet": 0.75,
    "lived_in": 0.7, "worked_at": 0.7, "age": 0.7, "name": 0.8, "email": 0.7, "phone": 0.7,
    "birthday": 0.75, "has_friend": 0.6, "speaks": 0.6, "visited": 0.55, "likes": 0.5,
    "dislikes": 0.5, "plays": 0.5, "reports_to": 0.8, "owns": 0.8, "leads": 0.8, "decision": 0.8, "uses": 0.7,
}  # fmt: skip
_DEFAULT_IMPORTANCE = 0.5

_SENTENCES = {
    "lives_in": ("{s} lives in {v}.", "{s} no longer lives in {v}."),
    "lived_in": ("{s} used to live in {v}.", "{s} never lived in {v}."),
    "works_at": ("{s} works at {v}.", "{s} no longer works at {v}."),
    "worked_at": ("{s} used to work at {v}.", "{s} never worked at {v}."),
    "role": ("{s} is {a} {v}.", "{s} is no longer {a} {v}."),
    "likes": ("{s} likes {v}.", "{s} no longer likes {v}."),
    "dislikes": ("{s} dislikes {v}.", "{s} no longer dislikes {v}."),
    "plays": ("{s} plays {v}.", "{s} no longer plays {v}."),
    "speaks": ("{s} speaks {v}.", "{s} does not speak {v}."),
    "visited": ("{s} visited {v}.", "{s} did not visit {v}."),
    "is_from": ("{s} is from {v}.", "{s} is not from {v}."),
    "grew_up_in": ("{s} grew up in {v}.", "{s} did not grow up in {v}."),
    "born_in": ("{s} was born in {v}.", "{s} was not born in {v}."),
    "birth_date": ("{s} was born on {v}.", "{s} was not born on {v}."),
    "studies": ("{s} studies {v}.", "{s} no longer studies {v}."),
    "studies_at": ("{s} studies at {v}.", "{s} no longer studies at {v}."),
    "graduated_from": ("{s} graduated from {v}.", "{s} did not graduate from {v}."),
    "has_pet": ("{s} has a pet named {v}.", "{s} no longer has {v}."),
    "age": ("{s} is {v} years old.", "{s} is not {v} years old."),
    "reports_to": ("{s} reports to {v}.", "{s} no longer reports to {v}."),
    "owns": ("{s} owns {v}.", "{s} no longer owns {v}."),
    "leads": ("{s} leads {v}.", "{s} no longer leads {v}."),
    "uses": ("{s} uses {v}.", "{s} no longer uses {v}."),
    "decision": ("{s} decided to {v}.", "{s} no longer plans to {v}."),
}


def _sentence_for(subject: str, attribute: str, value: str, negated: bool) -> str:
    if attribute.endswith("_tool") and not negated:
        return f"{subject} uses {value} for {attribute.removesuffix('_tool').replace('_', ' ')}."
    if attribute in _SENTENCES:
        template = _SENTENCES[attribute][1 if negated else 0]
    else:
        label = attribute.replace("_", " ")
        template = "{s}'s " + label + (" is no longer {v}." if negated else " is {v}.")
    article = "an" if value[:1].lower() in "aeiou" else "a"
    return template.format(s=subject, v=value, a=article)


def fact_add(
    ctx: Context,
    clause: Clause,
    subject: str,
    attribute: str,
    value: str,
    *,
    obj: str | None = None,
    obj_kind: str = "other",
    previous: str | None = None,
    negated: bool = False,
    confidence: float = 0.9,
    sentence: str | None = None,
) -> None:
    if len(ctx.facts) >= MAX_FACTS:
        return
    value = value.strip()
    if not value:
        return
    if (attribute in {"uses", REPLACEMENT_ATTRIBUTE} or attribute.endswith("_tool")) and value.split()[0].casefold() in ctx.people:
        return  # "pages go to Priya", "alerts go to Yuki and Ewan": one of the scope's people is no tool
    importance = _IMPORTANCE.get(attribute, 0.75 if attribute.startswith("has_") else _DEFAULT_IMPORTANCE)
    ctx.facts.append(
        ExtractedFact(
            subject=subject,
            attribute=attribute,
            value=value,
            object_entity=obj,
            object_kind=obj_kind if obj else "other",
            sentence=sentence or _sentence_for(subject, attribute, value, negated),
            valid_from=clause.valid_from,
            previous_value=previous,
            negated=negated,
            corrects=clause.corrects if not negated else None,
            confidence=confidence,
            importance=importance,
        )
    )


def facts_deduped(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    seen, out = set(), []
    for fact in facts:
        key = (fact.subject.lower(), fact.attribute, fact.value.lower(), fact.negated)
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out


def entities_of(facts: list[ExtractedFact], ctx: Context) -> list[ExtractedEntity]:
    rank = {"actor": 0, "location": 1, "object": 2, "other": 3}
    found: dict[str, ExtractedEntity] = {}

    def note(name: str, kind: str, role: str) -> None:
        key = name.lower()
        if key not in found:
            found[key] = ExtractedEntity(name=name, kind=kind, role=role)
        elif rank[role] < rank[found[key].role]:
            found[key] = ExtractedEntity(name=found[key].name, kind=found[key].kind, role=role)

    for fact in facts:
        note(fact.subject, ctx.subject_kinds.get(fact.subject, "person"), "actor")
        if fact.object_entity:
            note(fact.object_entity, fact.object_kind, "location" if fact.object_kind == "place" else "object")
            if fact.previous_value:  # "moved from San Francisco": San Francisco is named too
                note(fact.previous_value, fact.object_kind, "location" if fact.object_kind == "place" else "object")
    return list(found.values())


def episode_importance(facts: list[ExtractedFact], text: str) -> float:
    if facts:
        return max(f.importance or _DEFAULT_IMPORTANCE for f in facts)
    return 0.1 if len(text) < 80 else 0.2  # small talk; kept, but ranked low


def relation_sentence(subject: str, attribute: str, word: str, name: str) -> str:
    if attribute.startswith("has_"):
        return f"{subject} has a {word} named {name}."
    return f"{subject}'s {word} is {name}."
