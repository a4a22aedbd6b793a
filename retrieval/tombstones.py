"""Erasure survives restore: a restore erases again what a tombstone says was erased.

`tombstones_reapply(scope=, origins=)` runs inside the restore's transaction, after its rows are
written and before its commit, so no one ever sees the erased rows come back. It first copies into
the scope the tombstones of the scopes the backup came from (a backup restored beside its source,
or into a scope of the same slug after the original was deleted, is erased the same way; the copy
travels in the scope's next backup), then, for each tombstone of the scope, oldest first, hashes
the scope's rows under the tombstone's key (memories/services/tombstones.py) and erases what
matches, by the code the erasure itself ran:
- a person's tombstone: entities whose name or alias is one of the erased names (and those merged
  into them) go through `people_erase`, which finds their words again by the names it now reads in
  the restored rows;
- any tombstone: episodes whose public id, turn key or text-and-time is in it go through
  `episodes_erase` (a forgotten episode; what a person's erasure took by its words).

Tombstones are never removed by a restore. One hashed with a key this deployment does not hold
cannot be matched: the restore's receipt counts it (`tombstones_unmatched`), so the operator can
set SECRET_KEY (or SECRET_KEY_FALLBACKS) to the key it was made with.
"""

import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from memories.models import Entity, EntityAlias, Episode, Scope, Tombstone
from memories.normalize import normalize_name
from memories.services.tombstones import Hasher, secrets_by_key_id
from retrieval.erase import people_erase, people_with_merged
from retrieval.forget import episodes_erase
from retrieval.indexing import speakers_refresh

# What "rows removed again" counts: memory rows, not the index's documents or audit texts.
_ROWS = ("sessions", "turns", "episodes", "facts_erased", "fact_supports", "mentions", "entities", "aliases")


@dataclass(frozen=True)
class Reapplied:
    """One erasure a restore applied again: what it removed again, and why (no text)."""

    erasure_id: uuid.UUID
    kind: str
    erased_at: datetime
    erased_by: str
    rows: int
    counts: dict[str, int]

    @property
    def reason(self) -> str:
        return f"erased on {self.erased_at:%Y-%m-%d}"

    def as_dict(self) -> dict:
        return {
            "erasure_id": str(self.erasure_id), "kind": self.kind, "erased_at": self.erased_at.isoformat(),
            "erased_by": self.erased_by, "rows": self.rows, "reason": self.reason, "counts": dict(self.counts),
        }


@dataclass(frozen=True)
class Reapplication:
    reapplied: list[Reapplied]
    rewritten: list[int]  # documents rewritten, to embed after the commit
    unmatched: int  # tombstones hashed with a key this deployment does not hold

    @property
    def rows(self) -> int:
        return sum(r.rows for r in self.reapplied)


def tombstones_reapply(*, scope: Scope, origins: set[uuid.UUID]) -> Reapplication:
    """Copy the origins' tombstones into `scope` and erase again what any tombstone of `scope`
    matches. Call inside a transaction holding `scope_lock_for_transaction(scope)`."""
    _tombstones_adopt(scope=scope, origins=origins)
    secrets = secrets_by_key_id()
    reapplied, rewritten, unmatched = [], [], 0
    for tombstone in Tombstone.objects.in_scope(scope).order_by("erased_at", "id"):
        secret = secrets.get(tombstone.key_id)
        if secret is None:
            unmatched += 1
            continue
        counts: Counter[str] = Counter()
        rewritten += _reapply(scope=scope, tombstone=tombstone, hasher=Hasher(secret), counts=counts)
        rows = sum(counts[kind] for kind in _ROWS)
        if rows:
            reapplied.append(Reapplied(
                erasure_id=tombstone.public_id, kind=tombstone.kind, erased_at=tombstone.erased_at, erased_by=tombstone.erased_by,
                rows=rows, counts={key: counts[key] for key in sorted(counts) if counts[key]},
            ))
    if reapplied:
        speakers_refresh(scope=scope)
    return Reapplication(reapplied=reapplied, rewritten=rewritten, unmatched=unmatched)


def _tombstones_adopt(*, scope: Scope, origins: set[uuid.UUID]) -> None:
    held = set(Tombstone.objects.in_scope(scope).values_list("public_id", flat=True))
    adopted = []
    for tombstone in Tombstone.objects.filter(origin__in=origins).exclude(scope=scope).order_by("erased_at", "id"):
        if tombstone.public_id not in held:
            held.add(tombstone.public_id)
            tombstone.pk, tombstone.scope = None, scope
            adopted.append(tombstone)
    Tombstone.objects.bulk_create(adopted)


def _reapply(*, scope: Scope, tombstone: Tombstone, hasher: Hasher, counts: Counter) -> list[int]:
    rewritten: list[int] = []
    names = set(tombstone.names)
    if names:
        people = _entities_named(scope=scope, names=names, hasher=hasher)
        if people:
            rewritten += people_erase(scope=scope, people=people_with_merged(scope=scope, entity_ids=people), counts=counts)
    episode_ids = _episodes_matching(scope=scope, tombstone=tombstone, hasher=hasher)
    episodes = list(Episode.objects.in_scope(scope).filter(pk__in=episode_ids).select_for_update().order_by("id"))
    if episodes:
        rewritten += episodes_erase(scope=scope, episodes=episodes, counts=counts)
    return rewritten


def _entities_named(*, scope: Scope, names: set[str], hasher: Hasher) -> list[int]:
    found = {pk for pk, name in Entity.objects.in_scope(scope).values_list("pk", "name") if hasher.name(normalize_name(name)) in names}
    found |= {
        entity_id for entity_id, normalized in EntityAlias.objects.in_scope(scope).values_list("entity_id", "normalized")
        if hasher.name(normalized) in names
    }
    return sorted(found)


def _episodes_matching(*, scope: Scope, tombstone: Tombstone, hasher: Hasher) -> list[int]:
    ids, turns, texts = set(tombstone.episodes), set(tombstone.turns), set(tombstone.texts)
    matched = []
    rows = Episode.objects.in_scope(scope).values_list(
        "pk", "public_id", "text", "occurred_at", "turn__session__external_id", "turn__external_id",
    ).order_by("id")
    for pk, public_id, text, occurred_at, session_external_id, turn_external_id in rows.iterator(chunk_size=2000):
        if (
            hasher.episode_id(public_id) in ids or hasher.text(text, occurred_at) in texts
            or (turn_external_id is not None and hasher.turn(session_external_id, turn_external_id) in turns)
        ):
            matched.append(pk)
    return matched
