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
from collections import Counter, defaultdict
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
    matches. Call inside a transaction holding `scope_lock_for_transaction(scope)`.

    The scope's rows are hashed once per key, not once per tombstone: a scope forgotten from a
    thousand times still costs one pass over its episodes and entities."""
    _tombstones_adopt(scope=scope, origins=origins)
    secrets = secrets_by_key_id()
    tombstones = list(Tombstone.objects.in_scope(scope).order_by("erased_at", "id"))
    usable = [t for t in tombstones if t.key_id in secrets]
    episodes_of, people_of = _matches(scope=scope, tombstones=usable, secrets=secrets)
    reapplied, rewritten = [], []
    for tombstone in usable:
        counts: Counter[str] = Counter()
        # Earlier tombstones may have erased some of these rows already: only those left.
        people = list(Entity.objects.in_scope(scope).filter(pk__in=people_of[tombstone.pk]).values_list("pk", flat=True))
        if people:
            rewritten += people_erase(scope=scope, people=people_with_merged(scope=scope, entity_ids=people), counts=counts)
        episodes = list(Episode.objects.in_scope(scope).filter(pk__in=episodes_of[tombstone.pk]).select_for_update().order_by("id"))
        if episodes:
            rewritten += episodes_erase(scope=scope, episodes=episodes, counts=counts)
        rows = sum(counts[kind] for kind in _ROWS)
        if rows:
            reapplied.append(Reapplied(
                erasure_id=tombstone.public_id, kind=tombstone.kind, erased_at=tombstone.erased_at, erased_by=tombstone.erased_by,
                rows=rows, counts={key: counts[key] for key in sorted(counts) if counts[key]},
            ))
    if reapplied:
        speakers_refresh(scope=scope)
    return Reapplication(reapplied=reapplied, rewritten=rewritten, unmatched=len(tombstones) - len(usable))


def _tombstones_adopt(*, scope: Scope, origins: set[uuid.UUID]) -> None:
    held = set(Tombstone.objects.in_scope(scope).values_list("public_id", flat=True))
    adopted = []
    for tombstone in Tombstone.objects.filter(origin__in=origins).exclude(scope=scope).order_by("erased_at", "id"):
        if tombstone.public_id not in held:
            held.add(tombstone.public_id)
            tombstone.pk, tombstone.scope = None, scope
            adopted.append(tombstone)
    Tombstone.objects.bulk_create(adopted)


def _matches(
    *, scope: Scope, tombstones: list[Tombstone], secrets: dict[str, str],
) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """For each tombstone (by pk), the episodes and the entities of the scope its digests match."""
    episodes_of: dict[int, set[int]] = defaultdict(set)
    people_of: dict[int, set[int]] = defaultdict(set)
    for key_id, secret in secrets.items():
        group = [t for t in tombstones if t.key_id == key_id]
        if not group:
            continue
        hasher = Hasher(secret)
        by_digest: dict[str, set[int]] = defaultdict(set)  # episode, turn and text digests → tombstones
        by_name: dict[str, set[int]] = defaultdict(set)
        for t in group:
            for digest in (*t.episodes, *t.turns, *t.texts):
                by_digest[digest].add(t.pk)
            for digest in t.names:
                by_name[digest].add(t.pk)
        if by_digest:
            rows = Episode.objects.in_scope(scope).values_list(
                "pk", "public_id", "text", "occurred_at", "turn__session__external_id", "turn__external_id",
            ).order_by("id")
            for pk, public_id, text, occurred_at, session_external_id, turn_external_id in rows.iterator(chunk_size=2000):
                digests = [hasher.episode_id(public_id), hasher.text(text, occurred_at)]
                if turn_external_id is not None:
                    digests.append(hasher.turn(session_external_id, turn_external_id))
                for digest in digests:
                    for owner in by_digest.get(digest, ()):
                        episodes_of[owner].add(pk)
        if by_name:
            names = [*Entity.objects.in_scope(scope).values_list("pk", "name")]
            names = [(pk, normalize_name(name)) for pk, name in names]
            names += list(EntityAlias.objects.in_scope(scope).values_list("entity_id", "normalized"))
            for pk, normalized in names:
                for owner in by_name.get(hasher.name(normalized), ()):
                    people_of[owner].add(pk)
    return episodes_of, people_of
