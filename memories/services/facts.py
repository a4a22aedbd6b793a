"""Facts for people: read them, correct, retract and restore them. Every change is audited.

A correction fixes what the memory believes, it does not say the world changed (a new memory
does that): the corrected fact takes over the old one's `valid_from`, and the old one ends
where it began (`valid_to = valid_from`, status `superseded`), an empty interval that marks a
belief that was never true, kept for the record and linked through `supersedes`.
"""

import logging
import re
import uuid

from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from accounts.audit import audit_record
from accounts.permissions import Access, Principal, require
from memoryweb.errors import Conflict, InvalidInput, NotFound
from memories.extraction.vocabulary import canonical_attribute, is_single_valued
from memories.models import Entity, Episode, Fact, FactStatus, Provenance, Scope
from memories.normalize import normalize_value
from memories.services.reconcile import fact_end, lock_subject_attribute
from memories.services.resolve import Resolver, entity_canonical, entity_find
from memories.services.indexing import queue_index
from memories.services.validation import clean_label

logger = logging.getLogger("memoryweb.facts")
_ATTRIBUTE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def fact_get(*, scope: Scope, fact_public_id, lock: bool = False, held: bool = False) -> Fact:
    """A fact of this scope; another scope's fact does not exist here, nor (unless `held`, for
    the review services) a fact held for review."""
    facts = Fact.objects.in_scope(scope).select_related("subject", "object_entity", "supersedes", "source_episode", "author")
    if not held:
        facts = facts.exclude(status=FactStatus.HELD)
    if lock:
        facts = facts.select_for_update(of=("self",))
    fact = facts.filter(public_id=_uuid(fact_public_id, what="fact")).first()
    if fact is None:
        raise NotFound(f"No fact {fact_public_id} in scope {scope.slug!r}.")
    return fact


def entity_get(*, scope: Scope, name_or_id: str) -> Entity:
    """An entity by public id, or by name as resolution finds it (alias, containment, trigram)."""
    text = str(name_or_id).strip()
    try:
        public_id = uuid.UUID(text)
    except ValueError:
        found = entity_find(scope=scope, name=text) if text else None
        if found is None:
            raise NotFound(f"No entity named {text!r} in scope {scope.slug!r}.") from None
        return found[0]
    entity = Entity.objects.in_scope(scope).filter(public_id=public_id).first()
    if entity is None:
        raise NotFound(f"No entity {text} in scope {scope.slug!r}.")
    return entity_canonical(entity)


def fact_list(*, scope: Scope, entity: str | None = None, attribute: str | None = None) -> QuerySet[Fact]:
    """Active facts: what the memory believes now."""
    facts = _facts(scope).filter(status=FactStatus.ACTIVE)
    if entity:
        facts = facts.filter(subject=entity_get(scope=scope, name_or_id=entity))
    if attribute:
        facts = facts.filter(attribute=canonical_attribute(attribute))
    return facts.order_by("subject__name", "attribute", F("valid_from").asc(nulls_first=True), "id")


def fact_history(*, scope: Scope, entity_name_or_id: str | None = None, attribute: str | None = None) -> QuerySet[Fact]:
    """Every fact, whatever its status, in validity order: the chains of what was true when
    (held facts are not part of them until a person approves them)."""
    facts = _facts(scope).exclude(status=FactStatus.HELD)
    if entity_name_or_id:
        facts = facts.filter(subject=entity_get(scope=scope, name_or_id=entity_name_or_id))
    if attribute:
        facts = facts.filter(attribute=canonical_attribute(attribute))
    return facts.order_by("subject__name", "attribute", F("valid_from").asc(nulls_first=True), "id")


def entity_list(*, scope: Scope, query: str = "") -> QuerySet[Entity]:
    """Canonical entities (merged ones are found through what they were merged into), by name;
    `query` matches a name or any alias, case-insensitively."""
    entities = Entity.objects.in_scope(scope).filter(merged_into__isnull=True)
    query = (query or "").strip()
    if query:
        entities = entities.filter(Q(name__icontains=query) | Q(aliases__alias__icontains=query)).distinct()
    return entities.order_by("name", "id")


def fact_chain(*, scope: Scope, fact: Fact) -> list[Fact]:
    """The whole supersession chain through `fact`, oldest first: what it replaced, and what replaced it."""
    facts = _facts(scope)
    chain, seen = [fact], {fact.pk}
    earlier = fact
    while earlier.supersedes_id is not None and earlier.supersedes_id not in seen:
        earlier = facts.get(pk=earlier.supersedes_id)
        seen.add(earlier.pk)
        chain.insert(0, earlier)
    later = fact
    while (successor := facts.filter(supersedes=later).exclude(pk__in=seen).order_by("id").first()) is not None:
        seen.add(successor.pk)
        chain.append(successor)
        later = successor
    return chain


def fact_list_for_episode(*, scope: Scope, episode: Episode, include_held: bool = False) -> QuerySet[Fact]:
    """What extraction made of `episode`; facts held for review only when asked (the review and episode pages)."""
    facts = _facts(scope).filter(source_episode=episode)
    if not include_held:
        facts = facts.exclude(status=FactStatus.HELD)
    return facts.order_by("id")


def fact_correct(
    *, scope: Scope, fact_public_id, value: str | None = None, sentence: str | None = None, attribute: str | None = None,
    actor: Principal | None,
) -> Fact:
    """Replace an active fact with a corrected one (provenance manual, author recorded)."""
    require(actor, scope, Access.WRITE)
    with transaction.atomic():
        old = fact_get(scope=scope, fact_public_id=fact_public_id, lock=True)
        if old.status != FactStatus.ACTIVE:
            raise Conflict(f"Fact {old.public_id} is {old.status}; only an active fact can be corrected (restore it first).")
        new_attribute = _clean_attribute(attribute) if attribute is not None else old.attribute
        new_value = clean_label(value, what="Value", max_length=300, required=True, missing="is empty") if value is not None else old.value
        value_changed = new_value != old.value
        if sentence is not None:
            new_sentence = clean_label(sentence, what="Sentence", max_length=1000, required=True, missing="is empty")
        elif value_changed and old.value in old.sentence:
            new_sentence = old.sentence.replace(old.value, new_value)
        elif value_changed or new_attribute != old.attribute:
            new_sentence = f"{old.subject.name} {new_attribute.replace('_', ' ')} {new_value}."
        else:
            new_sentence = old.sentence
        if (new_attribute, new_value, new_sentence) == (old.attribute, old.value, old.sentence):
            raise InvalidInput("Nothing to correct: give a new value, sentence or attribute.")

        object_entity = old.object_entity
        if value_changed and old.object_entity is not None:
            object_entity = Resolver(scope=scope).resolve(new_value, kind=old.object_entity.kind).entity
        lock_subject_attribute(subject=old.subject, attribute=new_attribute)
        others = list(
            Fact.objects.in_scope(scope).select_for_update()
            .filter(subject=old.subject, attribute=new_attribute, status=FactStatus.ACTIVE).exclude(pk=old.pk)
        )
        clash = next((f for f in others if f.value_normalized == normalize_value(new_value)), None)
        if clash is not None:
            raise Conflict(f"Fact {clash.public_id} says that already; retract this one instead.")

        before = fact_as_dict(old)
        now = timezone.now()
        ended = []
        if new_attribute != old.attribute and is_single_valued(new_attribute):
            for other in others:
                fact_end(other, status=FactStatus.SUPERSEDED, at=now)
                ended.append(str(other.public_id))
        old.status = FactStatus.SUPERSEDED
        old.valid_to = old.valid_from or now
        old.save(update_fields=["status", "valid_to", "updated_at"])
        new = Fact.objects.create(
            scope=scope, subject=old.subject, attribute=new_attribute, value=new_value, value_normalized=normalize_value(new_value),
            object_entity=object_entity, sentence=new_sentence, valid_from=old.valid_from, supersedes=old,
            source_episode=old.source_episode, confidence=1.0, importance=old.importance, provenance=Provenance.MANUAL,
            author=actor.user if actor else None,
        )
        audit_record(
            principal=actor, action="fact.correct", target_type="fact", target_id=old.public_id, scope=scope,
            before=before, after={**fact_as_dict(new), "ended": ended},
        )
    queue_index(scope)
    return fact_get(scope=scope, fact_public_id=new.public_id)


def fact_retract(*, scope: Scope, fact_public_id, actor: Principal | None, reason: str = "") -> Fact:
    """End an active fact as untrue; nothing is removed."""
    require(actor, scope, Access.WRITE)
    with transaction.atomic():
        fact = fact_get(scope=scope, fact_public_id=fact_public_id, lock=True)
        if fact.status != FactStatus.ACTIVE:
            raise Conflict(f"Fact {fact.public_id} is {fact.status} already; only an active fact can be retracted.")
        before = fact_as_dict(fact)
        fact_end(fact, status=FactStatus.RETRACTED, at=timezone.now())
        audit_record(
            principal=actor, action="fact.retract", target_type="fact", target_id=fact.public_id, scope=scope,
            before=before, after={**fact_as_dict(fact), "reason": reason[:500]},
        )
    return fact


def fact_restore(*, scope: Scope, fact_public_id, actor: Principal | None) -> Fact:
    """Make a retracted or superseded fact active again. For a single-valued attribute the value
    active now ends (superseded); for a multi-valued one, restoring a value that is active
    already is a conflict."""
    require(actor, scope, Access.WRITE)
    with transaction.atomic():
        fact = fact_get(scope=scope, fact_public_id=fact_public_id, lock=True)
        if fact.status == FactStatus.ACTIVE:
            raise Conflict(f"Fact {fact.public_id} is active already.")
        lock_subject_attribute(subject=fact.subject, attribute=fact.attribute)
        active = list(
            Fact.objects.in_scope(scope).select_for_update()
            .filter(subject=fact.subject, attribute=fact.attribute, status=FactStatus.ACTIVE)
        )
        if not is_single_valued(fact.attribute):
            clash = next((f for f in active if f.value_normalized == fact.value_normalized), None)
            if clash is not None:
                raise Conflict(f"Fact {clash.public_id} says that already and is active.")
            active = []
        before = fact_as_dict(fact)
        now = timezone.now()
        for other in active:
            fact_end(other, status=FactStatus.SUPERSEDED, at=now)
        fact.status = FactStatus.ACTIVE
        fact.valid_to = None
        fact.save(update_fields=["status", "valid_to", "updated_at"])
        audit_record(
            principal=actor, action="fact.restore", target_type="fact", target_id=fact.public_id, scope=scope,
            before=before, after={**fact_as_dict(fact), "ended": [str(f.public_id) for f in active]},
        )
    return fact


def fact_set_importance(*, scope: Scope, fact_public_id, importance, actor: Principal | None) -> Fact:
    """Change how much a fact matters to ranking (0..1), whatever its status. Audited."""
    try:
        importance = float(importance)
    except (TypeError, ValueError):
        raise InvalidInput("Importance must be a number from 0 to 1.") from None
    if not 0 <= importance <= 1:  # NaN fails this too
        raise InvalidInput("Importance must be a number from 0 to 1.")
    with transaction.atomic():
        fact = fact_get(scope=scope, fact_public_id=fact_public_id, lock=True)
        if fact.importance == importance:
            return fact
        before = {"importance": fact.importance}
        fact.importance = importance
        fact.save(update_fields=["importance", "updated_at"])
        audit_record(
            principal=actor, action="fact.importance", target_type="fact", target_id=fact.public_id, scope=scope,
            before=before, after={"importance": importance},
        )
    return fact  # ranking reads importance from the row when it hydrates a hit: nothing to reindex


def fact_as_dict(fact: Fact) -> dict:
    """A JSON-ready view of a fact, for audit events and machine output."""
    return {
        "id": str(fact.public_id),
        "subject": fact.subject.name,
        "subject_id": str(fact.subject.public_id),
        "attribute": fact.attribute,
        "value": fact.value,
        "object_entity": str(fact.object_entity.public_id) if fact.object_entity_id else None,
        "sentence": fact.sentence,
        "valid_from": fact.valid_from.isoformat() if fact.valid_from else None,
        "valid_to": fact.valid_to.isoformat() if fact.valid_to else None,
        "status": fact.status,
        "supersedes": str(fact.supersedes.public_id) if fact.supersedes_id else None,
        "source_episode": str(fact.source_episode.public_id) if fact.source_episode_id else None,
        "confidence": fact.confidence,
        "importance": fact.importance,
        "provenance": fact.provenance,
        "review": fact.review,
        "author": fact.author.username if fact.author_id else None,
    }


def episode_as_dict(episode: Episode, *, facts: list[Fact] | None = None) -> dict:
    """A JSON-ready view of an episode and its processing status (with the facts it produced, when given)."""
    data = {
        "id": str(episode.public_id), "status": episode.status, "error": episode.error, "attempts": episode.attempts,
        "text": episode.text, "speaker": episode.speaker, "occurred_at": episode.occurred_at.isoformat(),
        "ingested_at": episode.ingested_at.isoformat(), "importance": episode.importance, "source": episode.source,
        "session_id": episode.session.external_id if episode.session_id else None,
        "turn_id": episode.turn.external_id if episode.turn_id else None,
    }
    if facts is not None:
        data["facts"] = [fact_as_dict(fact) for fact in facts]
    return data


def _facts(scope: Scope) -> QuerySet[Fact]:
    return Fact.objects.in_scope(scope).select_related("subject", "object_entity", "supersedes", "source_episode", "author")


def _uuid(value, *, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise NotFound(f"No {what} {value!r}.") from None


def _clean_attribute(attribute: str) -> str:
    attribute = canonical_attribute(str(attribute))
    if not _ATTRIBUTE.match(attribute):
        raise InvalidInput("An attribute is 1-64 lowercase letters, digits and underscores, starting with a letter.")
    return attribute
