"""Merging entities: two entities of a scope that are one identity become one, and a merge can
be undone exactly.

A merge moves to the target every fact about the source (whatever its status) and every fact
pointing at it, its mentions and its aliases; the source stays, with `merged_into` set, so
resolution follows it to the target (memories/services/resolve.py: `entity_canonical`). The
source's name vectors stay on the source too: resolution reaching them follows `merged_into`.

Collisions. The database keeps one active fact per (scope, subject, attribute, normalised value),
so a source fact that says, actively, what an active fact of the target says already cannot
simply move. The target's fact is kept; it begins at the earlier of the two `valid_from`s (the
value has held since either said it); the source's duplicate is superseded with an empty
interval (`valid_to = valid_from`, as a correction marks a belief recorded by mistake) and
moves with the rest, so histories still show it; and the episodes behind the duplicate (its
source episode and its supports) become `FactSupport`s of the kept fact, so forgetting the
kept fact's own episode does not erase what the source's episodes said. Two different active
values of a single-valued attribute (one lives_in each) break no rule and both stay active: a
merge cannot tell which is current, so the preview lists them for a person to correct.

Every row the merge changes is recorded by id in an `EntityMerge`; `entity_merge_undo` puts each
back (dropped duplicate mentions are recreated under their old ids), so the tables are as they
were. Row timestamps (`Fact.updated_at`) are not touched by either, for the same reason; the
merge record and the audit events say when. A merge is undone last-in first-out: an undo is
refused while a later merge involving either entity stands, or when a moved row has moved on.
Rows the target gained after the merge (new facts about it) stay with the target.
"""

from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.audit import audit_record
from accounts.permissions import Access, Principal, require
from memoryweb.errors import Conflict, NotFound
from memories.extraction.vocabulary import is_single_valued
from memories.models import (
    Embedding, EmbeddingTarget, Entity, EntityAlias, EntityMerge, Episode, Fact, FactStatus, FactSupport, Mention, Scope,
)
from memories.services.indexing import queue_index
from memories.services.reconcile import lock_subject_attribute


@dataclass(frozen=True)
class Collision:
    """An active fact of the source that an active fact of the target says already."""

    kept: Fact  # the target's, stays active
    duplicate: Fact  # the source's, superseded and moved

    def as_dict(self) -> dict:
        return {"kept": str(self.kept.public_id), "duplicate": str(self.duplicate.public_id), "attribute": self.kept.attribute,
                "value": self.kept.value, "outcome": "duplicate superseded, its episodes support the kept fact"}


@dataclass
class MergePreview:
    """What `entity_merge` would do, computed the same way the merge computes it."""

    source: Entity
    target: Entity
    facts_as_subject: list[Fact] = field(default_factory=list)
    facts_as_object: list[Fact] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)  # move to the target
    mentions_dropped: list[Mention] = field(default_factory=list)  # the target has the same mention already
    aliases: list[EntityAlias] = field(default_factory=list)
    vectors: int = 0  # the source's name vectors: they stay, resolution follows merged_into
    collisions: list[Collision] = field(default_factory=list)
    # (source fact, target fact): two active values of a single-valued attribute, both left active.
    conflicts: list[tuple[Fact, Fact]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "source": {"id": str(self.source.public_id), "name": self.source.name},
            "target": {"id": str(self.target.public_id), "name": self.target.name},
            "facts_as_subject": [str(f.public_id) for f in self.facts_as_subject],
            "facts_as_object": [str(f.public_id) for f in self.facts_as_object],
            "mentions": len(self.mentions),
            "mentions_dropped": len(self.mentions_dropped),
            "aliases": [a.alias for a in self.aliases],
            "vectors_kept_on_source": self.vectors,
            "collisions": [c.as_dict() for c in self.collisions],
            "conflicts": [
                {"attribute": s.attribute, "source_fact": str(s.public_id), "source_value": s.value,
                 "target_fact": str(t.public_id), "target_value": t.value, "outcome": "both stay active"}
                for s, t in self.conflicts
            ],
        }


def entity_merge_preview(*, principal: Principal | None, scope: Scope, source: Entity, target: Entity) -> MergePreview:
    """What merging `source` into `target` would move and how collisions would be settled. Writes nothing."""
    require(principal, scope, Access.READ)
    source, target = _pair(scope=scope, source=source, target=target, lock=False)
    return _plan(scope=scope, source=source, target=target)


def entity_merge(*, principal: Principal | None, scope: Scope, source: Entity, target: Entity) -> EntityMerge:
    """Merge `source` into `target` in one transaction (see the module's docstring). Audited as
    `entity.merge` with the ids of every row changed; returns the merge record, whose public id
    undoes it."""
    require(principal, scope, Access.WRITE)
    with transaction.atomic():
        source, target = _pair(scope=scope, source=source, target=target, lock=True)
        _lock_attributes(scope=scope, entities=[source, target])
        plan = _plan(scope=scope, source=source, target=target)
        now = timezone.now()
        collisions = [_settle(collision, scope=scope, now=now) for collision in plan.collisions]
        subject_ids = [f.pk for f in plan.facts_as_subject]
        object_ids = [f.pk for f in plan.facts_as_object]
        Fact.objects.filter(pk__in=subject_ids).update(subject=target)
        Fact.objects.filter(pk__in=object_ids).update(object_entity=target)
        Mention.objects.filter(pk__in=[m.pk for m in plan.mentions_dropped]).delete()
        Mention.objects.filter(pk__in=[m.pk for m in plan.mentions]).update(entity=target)
        EntityAlias.objects.filter(pk__in=[a.pk for a in plan.aliases]).update(entity=target)
        Entity.objects.filter(pk=source.pk).update(merged_into=target)
        moved = {
            "facts_subject": subject_ids,
            "facts_object": object_ids,
            "mentions": [m.pk for m in plan.mentions],
            "mentions_dropped": [{"id": m.pk, "episode": m.episode_id, "role": m.role} for m in plan.mentions_dropped],
            "aliases": [a.pk for a in plan.aliases],
            "collisions": collisions,
        }
        merge = EntityMerge.objects.create(
            scope=scope, source=source, target=target, moved=moved, by=principal.user if principal else None,
            by_label=principal.label if principal else "system", at=now,
        )
        audit_record(
            principal=principal, action="entity.merge", target_type="entity", target_id=source.public_id, scope=scope,
            before={"merged_into": None},
            after={"merge": str(merge.public_id), "merged_into": str(target.public_id), "moved": moved,
                   "facts": [str(f.public_id) for f in plan.facts_as_subject + plan.facts_as_object]},
        )
    queue_index(scope)
    return merge


def entity_merge_undo(*, principal: Principal | None, scope: Scope, merge_id) -> EntityMerge:
    """Put back every row `merge_id` changed and clear the source's `merged_into`. Audited as
    `entity.unmerge`. Refused (Conflict) when undone already, while a later merge involving
    either entity stands, or when a moved row has moved on since."""
    require(principal, scope, Access.WRITE)
    with transaction.atomic():
        merge = (
            EntityMerge.objects.in_scope(scope).select_for_update().select_related("source", "target")
            .filter(public_id=_uuid(merge_id)).first()
        )
        if merge is None:
            raise NotFound(f"No merge {merge_id} in scope {scope.slug!r}.")
        if merge.undone_at is not None:
            raise Conflict(f"Merge {merge.public_id} was undone already.")
        source, target = _locked(scope=scope, pks=[merge.source_id, merge.target_id])
        pair = [source.pk, target.pk]
        later = (
            EntityMerge.objects.in_scope(scope).filter(undone_at__isnull=True, id__gt=merge.pk)
            .filter(Q(source_id__in=pair) | Q(target_id__in=pair)).select_related("source", "target").first()
        )
        if later is not None:
            raise Conflict(
                f"Merge {later.public_id} ({later.source.name} into {later.target.name}) came later and involves "
                f"these entities; undo it first."
            )
        moved = merge.moved
        _refuse_moved_on(moved, source=source, target=target)
        _lock_attributes(scope=scope, entities=[source, target])

        Fact.objects.filter(pk__in=moved["facts_subject"], subject=target).update(subject=source)
        Fact.objects.filter(pk__in=moved["facts_object"], object_entity=target).update(object_entity=source)
        Mention.objects.filter(pk__in=moved["mentions"], entity=target).update(entity=source)
        EntityAlias.objects.filter(pk__in=moved["aliases"], entity=target).update(entity=source)
        episodes = set(Episode.objects.filter(pk__in=[m["episode"] for m in moved["mentions_dropped"]]).values_list("pk", flat=True))
        Mention.objects.bulk_create([  # the same ids again; episodes forgotten since keep no mention
            Mention(id=m["id"], scope=scope, episode_id=m["episode"], entity=source, role=m["role"])
            for m in moved["mentions_dropped"] if m["episode"] in episodes
        ])
        for collision in moved["collisions"]:
            FactSupport.objects.filter(pk__in=collision["supports"]).delete()
            Fact.objects.filter(pk=collision["kept"]).update(valid_from=_when(collision["kept_valid_from"]))
            Fact.objects.filter(pk=collision["duplicate"]).update(status=FactStatus.ACTIVE, valid_to=None)
        Entity.objects.filter(pk=source.pk).update(merged_into=None)
        merge.undone_at = timezone.now()
        merge.save(update_fields=["undone_at"])
        audit_record(
            principal=principal, action="entity.unmerge", target_type="entity", target_id=source.public_id, scope=scope,
            before={"merge": str(merge.public_id), "merged_into": str(target.public_id)}, after={"merged_into": None},
        )
    queue_index(scope)
    return merge


def merge_as_dict(merge: EntityMerge) -> dict:
    moved = merge.moved
    return {
        "id": str(merge.public_id), "source": merge.source.name, "source_id": str(merge.source.public_id),
        "target": merge.target.name, "target_id": str(merge.target.public_id), "by": merge.by_label,
        "at": merge.at.isoformat(), "undone_at": merge.undone_at.isoformat() if merge.undone_at else None,
        "moved": {kind: len(ids) for kind, ids in moved.items()},
    }


def merge_fact_ids(merge: EntityMerge) -> list[int]:
    """The facts whose subject the merge (or its undo) changed: their search documents name the subject."""
    return list(merge.moved.get("facts_subject", []))


def _pair(*, scope: Scope, source: Entity, target: Entity, lock: bool) -> tuple[Entity, Entity]:
    """Both entities as they stand, from this scope only (another scope's entity is not found)."""
    if source.pk == target.pk:
        raise Conflict("An entity cannot be merged into itself.")
    source, target = _locked(scope=scope, pks=[source.pk, target.pk]) if lock else _read(scope=scope, pks=[source.pk, target.pk])
    for entity in (source, target):
        if entity.merged_into_id is not None:
            raise Conflict(f"Entity {entity.name!r} ({entity.public_id}) is merged already; merge what it was merged into.")
    return source, target


def _read(*, scope: Scope, pks: list[int]) -> list[Entity]:
    found = Entity.objects.in_scope(scope).in_bulk(pks)
    if len(found) != len(pks):
        raise NotFound(f"No such entity in scope {scope.slug!r}.")
    return [found[pk] for pk in pks]


def _locked(*, scope: Scope, pks: list[int]) -> list[Entity]:
    # In id order, so two merges of the same pair in opposite directions cannot deadlock.
    found = {e.pk: e for e in Entity.objects.in_scope(scope).select_for_update().filter(pk__in=pks).order_by("pk")}
    if len(found) != len(pks):
        raise NotFound(f"No such entity in scope {scope.slug!r}.")
    return [found[pk] for pk in pks]


def _lock_attributes(*, scope: Scope, entities: list[Entity]) -> None:
    """Reconciliation's advisory locks for every attribute either entity has, in a fixed order,
    so no extraction adds or supersedes a fact of theirs while rows move."""
    attributes = sorted(set(Fact.objects.in_scope(scope).filter(subject__in=entities).values_list("attribute", flat=True)))
    for entity in sorted(entities, key=lambda e: e.pk):
        for attribute in attributes:
            lock_subject_attribute(subject=entity, attribute=attribute)


def _plan(*, scope: Scope, source: Entity, target: Entity) -> MergePreview:
    facts = Fact.objects.in_scope(scope).select_related("subject").order_by("id")
    as_subject = list(facts.filter(subject=source))
    target_active = list(facts.filter(subject=target, status=FactStatus.ACTIVE))
    by_value = {(f.attribute, f.value_normalized): f for f in target_active}
    collisions, conflicts = [], []
    for fact in as_subject:
        if fact.status != FactStatus.ACTIVE:
            continue
        kept = by_value.get((fact.attribute, fact.value_normalized))
        if kept is not None:
            collisions.append(Collision(kept=kept, duplicate=fact))
        elif is_single_valued(fact.attribute):
            conflicts += [(fact, other) for other in target_active if other.attribute == fact.attribute]
    mentions = Mention.objects.in_scope(scope).filter(entity=source).order_by("id")
    held = set(Mention.objects.in_scope(scope).filter(entity=target).values_list("episode_id", "role"))
    return MergePreview(
        source=source, target=target,
        facts_as_subject=as_subject,
        facts_as_object=list(facts.filter(object_entity=source)),
        mentions=[m for m in mentions if (m.episode_id, m.role) not in held],
        mentions_dropped=[m for m in mentions if (m.episode_id, m.role) in held],
        aliases=list(EntityAlias.objects.in_scope(scope).filter(entity=source).order_by("id")),
        vectors=Embedding.objects.filter(scope=scope, target_type=EmbeddingTarget.ENTITY, target_id=source.pk).count(),
        collisions=collisions, conflicts=conflicts,
    )


def _settle(collision: Collision, *, scope: Scope, now: datetime) -> dict:
    """Supersede the duplicate before it moves (two active equal values cannot share a subject)
    and lend its episodes to the kept fact. Returns what undo needs to put it back."""
    kept, duplicate = collision.kept, collision.duplicate
    starts = [moment for moment in (kept.valid_from, duplicate.valid_from) if moment is not None]
    Fact.objects.filter(pk=duplicate.pk).update(status=FactStatus.SUPERSEDED, valid_to=duplicate.valid_from or now)
    if starts and min(starts) != kept.valid_from:
        Fact.objects.filter(pk=kept.pk).update(valid_from=min(starts))
    said = {duplicate.source_episode_id: (duplicate.sentence, duplicate.valid_from)} if duplicate.source_episode_id else {}
    for support in FactSupport.objects.filter(fact=duplicate).order_by("id"):
        said.setdefault(support.episode_id, (support.sentence, support.valid_from))
    already = {kept.source_episode_id, *FactSupport.objects.filter(fact=kept).values_list("episode_id", flat=True)}
    supports = FactSupport.objects.bulk_create([
        FactSupport(scope=scope, fact=kept, episode_id=episode_id, sentence=sentence, valid_from=valid_from)
        for episode_id, (sentence, valid_from) in said.items() if episode_id not in already
    ])
    return {
        "kept": kept.pk, "duplicate": duplicate.pk, "supports": [s.pk for s in supports],
        "kept_valid_from": kept.valid_from.isoformat() if kept.valid_from else None,
    }


def _refuse_moved_on(moved: dict, *, source: Entity, target: Entity) -> None:
    """Rows the merge moved that point elsewhere now (deleted ones, by forgetting, are simply gone)."""
    if source.merged_into_id != target.pk:
        raise Conflict(f"Entity {source.name!r} is no longer merged into {target.name!r}.")
    strays = (
        Fact.objects.filter(pk__in=moved["facts_subject"]).exclude(subject=target).exists()
        or Fact.objects.filter(pk__in=moved["facts_object"]).exclude(object_entity=target).exists()
        or Mention.objects.filter(pk__in=moved["mentions"]).exclude(entity=target).exists()
        or EntityAlias.objects.filter(pk__in=moved["aliases"]).exclude(entity=target).exists()
        # A collision's kept fact ended, or its duplicate made active again, since: putting the
        # old `valid_from` back could contradict what was done to them.
        or Fact.objects.filter(pk__in=[c["kept"] for c in moved["collisions"]]).exclude(status=FactStatus.ACTIVE).exists()
        or Fact.objects.filter(pk__in=[c["duplicate"] for c in moved["collisions"]]).exclude(status=FactStatus.SUPERSEDED).exists()
    )
    if strays:
        raise Conflict("Rows this merge moved have changed since; it can no longer be undone exactly.")


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _uuid(value) -> UUID:
    try:
        return UUID(str(value))
    except ValueError:
        raise NotFound(f"No merge {value!r}.") from None
