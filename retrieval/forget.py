"""Forgetting an episode: what it said stops being stored anywhere, search index included.

Erased, in one transaction: the episode and its turn, and the consolidation summary made from
it (its other originals stay, unlinked); their search documents (the episode's,
the turn's and the windows centred on it), postings and vectors; the facts only it supports,
with theirs; its mentions; entities nothing else refers to any more, with their aliases and
vectors. The windows of neighbouring turns are rebuilt without its text (their vectors are
made again after the commit), the term statistics are corrected exactly, and audit events
about erased rows keep their action but lose their text.

What stays, and why:
- a fact another episode said too (a FactSupport row, written when reconciliation met the value
  active already) stays, with that episode as its source and that episode's own sentence;
- a manual correction stays (a person asserted it), without a source episode;
- a fact the erased one had superseded is active again (its `valid_to` cleared): the evidence
  that ended it is gone. When a later fact superseded the erased one, the chain closes over the
  gap instead: the later fact supersedes the older one, which now ends where the later begins.

It lives in retrieval, not memories, because it must erase the search index too, which sits in
the layer above the memory tables (docs/ARCHITECTURE.md, "Forgetting").
"""

import logging
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Q
from django.db.models.functions import Greatest, Now
from django.utils import timezone

from accounts.audit import audit_record
from accounts.models import AuditEvent
from accounts.permissions import Access, Principal, require
from memoryweb.errors import NotFound
from memories.extraction.vocabulary import is_single_valued
from memories.models import (
    Embedding, EmbeddingTarget, Entity, EntityAlias, Episode, Fact, FactStatus, FactSupport, Mention, Provenance, Scope, Session,
    Turn,
)
from memories.services.indexing import queue_index
from memories.services.reconcile import lock_subject_attribute
from memories.services.tombstones import ErasedKeys, tombstone_record
from retrieval.documents import TURN_COLLECTIONS, fact_document
from retrieval.indexing import (
    DocSpec, documents_embed, documents_erase, documents_rewrite, scope_lock_for_transaction, speakers_refresh, windows_around,
)
from retrieval.models import Collection, SearchDocument

logger = logging.getLogger("memoryweb.forget")

SCRUBBED = "[forgotten]"
# Audit payload keys that hold ids, states and dates, never what was said: kept when scrubbing.
_AUDIT_KEYS_KEPT = frozenset({
    "id", "subject_id", "object_entity", "status", "supersedes", "source_episode", "valid_from", "valid_to", "provenance",
    "author", "attribute", "confidence", "importance", "ended", "attempts",
})


@dataclass(frozen=True)
class ForgetReceipt:
    """What forgetting an episode erased and changed, for the caller and the audit trail (no text)."""

    episode_id: uuid.UUID
    scope: str
    forgotten_at: datetime
    forgotten_by: str
    counts: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "episode_id": str(self.episode_id),
            "scope": self.scope,
            "forgotten_at": self.forgotten_at.isoformat(),
            "forgotten_by": self.forgotten_by,
            "counts": dict(self.counts),
        }


def episode_forget(*, principal: Principal, scope: Scope, episode_public_id: uuid.UUID) -> ForgetReceipt:
    """Erase one episode and everything only it put into the memory and the search index.

    Another scope's episode is NotFound, like a missing one; a scope the principal may read but
    not write is Forbidden."""
    require(principal, scope, Access.WRITE)
    public_id = _episode_uuid(episode_public_id, scope=scope)
    counts: Counter[str] = Counter()
    keys = ErasedKeys()
    with transaction.atomic():
        # The indexers' lock first: one waiting on it re-reads after our commit, so it cannot
        # index again what we erase; then the episode, so its extraction cannot run meanwhile.
        scope_lock_for_transaction(scope)
        episode = Episode.objects.in_scope(scope).select_for_update().filter(public_id=public_id).first()
        if episode is None:
            raise NotFound(f"No episode {public_id} in scope {scope.slug!r}.")
        rewritten = episodes_erase(scope=scope, episodes=[episode], counts=counts, keys=keys)
        speakers_refresh(scope=scope)

        receipt = ForgetReceipt(
            episode_id=public_id, scope=scope.slug, forgotten_at=timezone.now(), forgotten_by=principal.label,
            counts={key: counts[key] for key in sorted(counts)},
        )
        # Hashes only: a backup taken before now, restored later, is forgotten again (retrieval/tombstones.py).
        tombstone_record(scope=scope, kind="episode", erasure_id=uuid.uuid4(), erased_at=receipt.forgotten_at, principal=principal,
                         keys=keys)
        audit_record(
            principal=principal, action="episode.forget", target_type="episode", target_id=public_id, scope=scope,
            after=receipt.as_dict(),
        )
    documents_embed_after_commit(scope=scope, doc_ids=rewritten, why=f"forgetting {public_id}")
    return receipt


def episodes_erase(
    *, scope: Scope, episodes: list[Episode], counts: Counter, facts: Iterable[int] = (), entities: Iterable[int] = (),
    keys: ErasedKeys | None = None,
) -> list[int]:
    """Erase these episodes, their turns and what only they said (see the module's docstring),
    and with them the facts `facts` and the entities `entities` whatever else supports them.
    Call inside a transaction holding `scope_lock_for_transaction` and the episodes' row locks.
    Adds to `counts` and to `keys` (what the tombstone hashes); returns the ids of the documents
    rewritten, to embed after the commit."""
    # A consolidation summary (memories/services/consolidate.py) was written from these episodes'
    # words, so it goes with them; its other originals are unlinked and condensed again later.
    summary_ids = {e.consolidated_into_id for e in episodes if e.consolidated_into_id} - {e.pk for e in episodes}
    episodes = episodes + list(Episode.objects.select_for_update().filter(pk__in=summary_ids).order_by("id"))
    episode_ids = [e.pk for e in episodes]
    turns = list(Turn.objects.filter(pk__in=[e.turn_id for e in episodes if e.turn_id]).select_related("session").order_by("id"))
    if keys is not None:
        keys.add_episodes(episodes, turns)
    # Ingest appends to a session under this lock; we close the gaps the turns leave.
    list(Session.objects.select_for_update().filter(pk__in={t.session_id for t in turns}).order_by("id"))

    erased, rewritten = _facts_settle(scope=scope, episode_ids=episode_ids, also=set(facts), counts=counts)
    entity_ids = set(Mention.objects.filter(episode_id__in=episode_ids).values_list("entity_id", flat=True)) | set(entities)
    entity_ids |= {f.subject_id for f in erased} | {f.object_entity_id for f in erased if f.object_entity_id}
    erased_ids = [f.pk for f in erased]

    _index_erase(scope=scope, episode_ids=episode_ids, turn_ids=[t.pk for t in turns], fact_ids=erased_ids, counts=counts)
    audit_scrub(scope=scope, targets=[("episode", e.public_id) for e in episodes] + [("fact", f.public_id) for f in erased], counts=counts)
    Fact.objects.filter(pk__in=erased_ids).update(supersedes=None)  # erased facts may supersede each other
    Fact.objects.filter(pk__in=erased_ids).delete()
    counts["facts_erased"] += len(erased_ids)
    counts["mentions"] += Mention.objects.filter(episode_id__in=episode_ids).delete()[0]
    counts["fact_supports"] += FactSupport.objects.filter(episode_id__in=episode_ids).delete()[0]
    Episode.objects.filter(pk__in=episode_ids).delete()
    counts["episodes"] += len(episode_ids)
    if turns:
        rewritten += _turns_erase(scope=scope, turns=turns, counts=counts)
    erased_entities = _entities_erase(scope=scope, entity_ids=entity_ids, counts=counts)
    audit_scrub(scope=scope, targets=[("entity", public) for public in erased_entities], counts=counts)
    return rewritten


def documents_embed_after_commit(*, scope: Scope, doc_ids: list[int], why: str) -> None:
    """New vectors for documents an erasure rewrote: slow, so after the commit. If it fails they
    stay without vectors (BM25 still finds them) until the next full index run, which is queued."""
    try:
        documents_embed(scope=scope, doc_ids=doc_ids)
    except Exception:
        logger.warning("Embedding documents rewritten by %s failed; queued", why, exc_info=True)
        queue_index(scope)


def _episode_uuid(value, *, scope: Scope) -> uuid.UUID:
    # A malformed id names no episode: the same 404 as an unknown one, as episode_get answers.
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value).strip())
    except ValueError:
        raise NotFound(f"No episode {value!r} in scope {scope.slug!r}.") from None


def _facts_settle(*, scope: Scope, episode_ids: list[int], also: set[int], counts: Counter) -> tuple[list[Fact], list[int]]:
    """Decide the fate of each fact the episodes are the source of: kept (another episode says it,
    or a person corrected it) or erased; the facts `also` are erased whatever supports them.
    Repair the supersession chains around the erased ones. Returns the facts to erase and the
    ids of fact documents rewritten."""
    concerned = Fact.objects.in_scope(scope).filter(Q(source_episode_id__in=episode_ids) | Q(pk__in=also))
    # Advisory locks per (subject, attribute) before row locks, in one order: reconciliation
    # takes them in that order too, so the two cannot deadlock.
    for subject_id, attribute in sorted(set(concerned.values_list("subject_id", "attribute"))):
        lock_subject_attribute(subject=Entity(pk=subject_id), attribute=attribute)
    facts = list(concerned.select_related("subject").select_for_update(of=("self",)).order_by("id"))
    erased: list[Fact] = []
    rewrite: list[DocSpec] = []
    for fact in facts:
        if fact.pk in also:
            erased.append(fact)
            continue
        support = (
            FactSupport.objects.filter(fact=fact).exclude(episode_id__in=episode_ids).select_related("episode")
            .order_by("episode__occurred_at", "episode_id").first()
        )
        if support is not None:
            # Said by another episode too: that episode becomes the source, in its own words.
            fact.source_episode = support.episode
            fields = ["source_episode", "updated_at"]
            if support.sentence and support.sentence != fact.sentence:
                # Events about this fact quote the forgotten episode's wording: that goes.
                audit_scrub(scope=scope, targets=[("fact", fact.public_id)], counts=counts, only=frozenset({fact.sentence}))
                fact.sentence = support.sentence
                fields.append("sentence")
                rewrite.append(DocSpec(
                    Collection.FACT, fact.pk, fact_document(sentence=fact.sentence, subject=fact.subject.name),
                    fact.valid_from or fact.created_at, fact.subject.name,
                ))
            fact.save(update_fields=fields)
            support.delete()  # it is the source now
            counts["facts_kept"] += 1
        elif fact.provenance == Provenance.MANUAL:
            # A person's correction stands on its own; it only loses its link to the episode.
            Fact.objects.filter(pk=fact.pk).update(source_episode=None)
            counts["facts_detached"] += 1
        else:
            erased.append(fact)
    _chains_close(scope=scope, erased=erased, counts=counts)
    return erased, documents_rewrite(scope=scope, specs=rewrite)


def _chains_close(*, scope: Scope, erased: list[Fact], counts: Counter) -> None:
    by_id = {f.pk: f for f in erased}

    def kept_ancestor(fact: Fact) -> int | None:
        seen, pk = set(), fact.supersedes_id
        while pk in by_id and pk not in seen:
            seen.add(pk)
            pk = by_id[pk].supersedes_id
        return None if pk in by_id else pk

    # A later fact that superseded an erased one now supersedes what that one had superseded,
    # which ends where the later fact begins (nothing is known to have happened in between).
    for later in Fact.objects.in_scope(scope).select_for_update().filter(supersedes_id__in=list(by_id)).exclude(pk__in=list(by_id)):
        later.supersedes_id = kept_ancestor(by_id[later.supersedes_id])
        later.save(update_fields=["supersedes", "updated_at"])
        counts["facts_relinked"] += 1
        older = Fact.objects.select_for_update().filter(pk=later.supersedes_id).first()
        if older is not None and older.status == FactStatus.SUPERSEDED and later.valid_from is not None:
            older.valid_to = max(later.valid_from, older.valid_from) if older.valid_from else later.valid_from
            older.save(update_fields=["valid_to", "updated_at"])

    # An older fact that only the erased facts had ended is true again: the evidence that ended it is gone.
    ancestors = {kept_ancestor(f) for f in erased} - {None}
    if ancestors:
        # The erased facts are deleted later in this transaction; until then an active one would hold
        # its value against an ancestor of the same value made current here (moved away and back).
        Fact.objects.filter(pk__in=list(by_id), status=FactStatus.ACTIVE).update(
            status=FactStatus.SUPERSEDED, valid_to=Greatest("valid_from", Now()),  # PostgreSQL's greatest skips a null
        )
    for older in Fact.objects.in_scope(scope).select_for_update().filter(pk__in=ancestors, status=FactStatus.SUPERSEDED).order_by("id"):
        if Fact.objects.filter(supersedes=older).exclude(pk__in=list(by_id)).exists():
            continue  # another fact still ends it
        lock_subject_attribute(subject=older.subject, attribute=older.attribute)
        active = Fact.objects.in_scope(scope).filter(subject_id=older.subject_id, attribute=older.attribute, status=FactStatus.ACTIVE)
        active = active.exclude(pk__in=list(by_id))
        if active.filter(value_normalized=older.value_normalized).exists():
            continue  # the same value is active already
        if is_single_valued(older.attribute) and active.exists():
            continue  # another value holds now
        older.status, older.valid_to = FactStatus.ACTIVE, None
        older.save(update_fields=["status", "valid_to", "updated_at"])
        counts["facts_reactivated"] += 1


def _index_erase(*, scope: Scope, episode_ids: list[int], turn_ids: list[int], fact_ids: list[int], counts: Counter) -> None:
    """The documents of the episodes (free-standing ones have their own), their turns (and the
    windows centred on them) and the erased facts, with their postings and vectors; raw-row
    vectors too."""
    keys = (
        Q(collection=Collection.FACT, target_id__in=fact_ids) | Q(collection__in=TURN_COLLECTIONS, target_id__in=turn_ids)
        | Q(collection=Collection.EPISODE, target_id__in=episode_ids)
    )
    raw = (
        Q(target_type=EmbeddingTarget.FACT, target_id__in=fact_ids) | Q(target_type=EmbeddingTarget.TURN, target_id__in=turn_ids)
        | Q(target_type=EmbeddingTarget.EPISODE, target_id__in=episode_ids)
    )
    doc_ids = list(SearchDocument.objects.in_scope(scope).filter(keys).values_list("id", flat=True))
    erased = documents_erase(scope=scope, doc_ids=doc_ids)
    counts["documents"] += erased["documents"]
    counts["postings"] += erased["postings"]
    counts["vectors"] += erased["vectors"] + Embedding.objects.filter(raw, scope=scope).delete()[0]


def _turns_erase(*, scope: Scope, turns: list[Turn], counts: Counter) -> list[int]:
    """Delete the turns, close the gaps in their sessions' positions, and rebuild the neighbours'
    windows without their text. Returns the ids of the windows rewritten (to embed again)."""
    Turn.objects.filter(pk__in=[t.pk for t in turns]).delete()
    counts["turns"] += len(turns)
    gone: dict[int, list[int]] = defaultdict(list)
    for turn in turns:
        gone[turn.session_id].append(turn.position)
    specs: dict[tuple[str, int], DocSpec] = {}
    for session_id, positions in gone.items():
        positions.sort()
        # Positions stay consecutive, as ingest makes them: incremental indexing finds a window's
        # members by position, and a gap would give it other members than a fresh build. Each
        # later turn moves up by the number of erased turns before it.
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memories_turn SET position = position"
                " - (SELECT count(*) FROM unnest(%s::integer[]) AS erased(position) WHERE erased.position < memories_turn.position)"
                " WHERE session_id = %s AND position > %s",
                [positions, session_id, positions[0]],
            )
        # The i-th gap (0-based) now starts where the turn after it moved to.
        for gap in sorted({position - i for i, position in enumerate(positions)}):
            for spec in windows_around(scope=scope, session_id=session_id, position=gap):
                specs[(spec.collection, spec.target_id)] = spec
    rewritten = documents_rewrite(scope=scope, specs=list(specs.values()))
    counts["windows_rebuilt"] += len(rewritten)
    return rewritten


def _entities_erase(*, scope: Scope, entity_ids: set[int], counts: Counter) -> list[uuid.UUID]:
    """Entities the episode named that nothing refers to any more: no fact about or pointing at
    them, no mention, not merged into another or another into them (their aliases then serve
    resolution). Their aliases and vectors go with them. Returns their public ids."""
    orphans = (
        Entity.objects.in_scope(scope).filter(pk__in=entity_ids, merged_into__isnull=True)
        .exclude(pk__in=Fact.objects.filter(scope=scope).values("subject_id"))
        .exclude(pk__in=Fact.objects.filter(scope=scope, object_entity__isnull=False).values("object_entity_id"))
        .exclude(pk__in=Mention.objects.filter(scope=scope).values("entity_id"))
        .exclude(pk__in=Entity.objects.filter(scope=scope, merged_into__isnull=False).values("merged_into_id"))
    )
    rows = list(orphans.select_for_update().values_list("pk", "public_id"))
    pks = [pk for pk, _ in rows]
    counts["aliases"] = EntityAlias.objects.filter(scope=scope, entity_id__in=pks).delete()[0]
    counts["vectors"] += Embedding.objects.filter(scope=scope, target_type=EmbeddingTarget.ENTITY, target_id__in=pks).delete()[0]
    Entity.objects.filter(pk__in=pks).delete()
    counts["entities"] = len(pks)
    return [public for _, public in rows]


def audit_scrub(*, scope: Scope, targets: list[tuple[str, uuid.UUID]], counts: Counter, only: frozenset[str] | None = None) -> None:
    """Audit events about erased rows keep who did what when, but not what was said (with
    `only`: just these strings, for a row that stays)."""
    if not targets:
        return
    about = Q()
    for target_type, public_id in targets:
        about |= Q(target_type=target_type, target_id=str(public_id))
    events = list(AuditEvent.objects.filter(about, scope=scope).select_for_update())
    changed = []
    for event in events:
        before, after = _scrub(event.before, only), _scrub(event.after, only)
        if (before, after) != (event.before, event.after):
            event.before, event.after = before, after
            changed.append(event)
    AuditEvent.objects.bulk_update(changed, ["before", "after"])
    counts["audit_events_scrubbed"] += len(changed)


def _scrub(payload, only: frozenset[str] | None):
    if isinstance(payload, dict):
        return {key: value if key in _AUDIT_KEYS_KEPT else _scrub(value, only) for key, value in payload.items()}
    if isinstance(payload, list):
        return [_scrub(value, only) for value in payload]
    if isinstance(payload, str) and (only is None or payload in only):
        return SCRUBBED
    return payload
