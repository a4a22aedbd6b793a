"""Keeping a scope's search index (documents, BM25 term statistics, vectors) caught up.

`index_pending(scope=…)` indexes whatever of the scope is not indexed yet. It is idempotent and
cheap when nothing is pending (one query comparing the highest fact, episode and turn ids with
the scope's watermarks). The Celery task `retrieval.index_scope` runs it with `full=True` after
ingest and extraction: the full sweep also finds rows committed out of id order (a transaction
that took its id earlier but committed later than the watermark moved) and vectors missing for
the embedding model in force.

`recall` calls `index_catch_up` instead, which never waits and never indexes in bulk: it makes
the same cheap check, and when rows are pending it indexes them only if the scope's lock is
free and they are at most CATCH_UP_ROWS. Otherwise it reports them (a `Backlog`), and recall
searches their raw text directly (`fulltext.unindexed_candidates`) until the task has run.

BM25 needs, per scope and collection, each lexeme's document frequency, the document count and
the total length. They are maintained incrementally: a document's lexemes are added when it is
inserted and removed before it is rewritten (a window whose session grew, a corrected fact).
One indexer per scope at a time (a session-level advisory lock), so the counters never race;
embedding happens while the lock is held but outside any transaction.

A background run (the server's runner, `index_if_free`; a worker's, `index_queued`) writes the
documents of a small backlog first and its vectors after, a slice at a time, documenting what
arrives meanwhile between slices (`_vectors_after`): a write is searchable by its words however far
the model is behind. In a large scope it does the full sweep's hygiene at most once a minute;
the runs in between look for rows without a document only among recent ids (`_background_run`).
"""

import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memoryweb.providers.embedders import Embedder
from memories.models import EmbeddingTarget, Episode, Fact, Scope, Turn
from memories.services.indexing import index_run_starting
from memories.services.vectors import (
    SCOPE_VECTORS_UP_TO, ensure_model_index, scope_graphs, scope_graphs_build, vectors_write,
)
from retrieval.concurrent import side_by_side, soon
from retrieval.documents import TURN_COLLECTIONS, WINDOW_RADII, fact_document, turn_document, vector_text, window_document
from retrieval.embedder import scope_embedder
from retrieval.matrix import vector_changes_prune
from retrieval.models import Collection, IndexState

logger = logging.getLogger("memoryweb.retrieval")

# Advisory lock namespace (first key) for "indexing scope <id>" (second key).
_LOCK_NAMESPACE = 0x52455452  # "RETR"
_BATCH = 2000
# A vector write of at least this many rows into the HNSW graph is split over two connections
# (`_store`): a graph insert costs about 1.2 ms a row in one backend, the rest of a write little.
GRAPH_SPLIT_ROWS = 512
# The most rows (facts, free-standing episodes, turns) recall indexes itself: what one `remember`
# or a short session leaves pending is a few embedding batches at most. A larger backlog is the
# index task's, so a question never pays for a bulk ingest's embeddings.
CATCH_UP_ROWS = 64
# A full run that wrote this many documents is followed by fresh statistics and a VACUUM of the
# documents and postings (`_analyze`): PostgreSQL's own insert threshold for autovacuum
# (autovacuum_vacuum_insert_threshold), which would come for them anyway, later.
BULK_DOCUMENTS = 1000
# Pending rows are counted up to this many (a count, not a scan of a huge backlog).
_BACKLOG_COUNT_CAP = 10_000
# A background run (`index_if_free`, `index_queued`) over a backlog of at most DOCUMENTS_FIRST_ROWS
# writes every pending row's documents and postings first and makes their vectors after,
# VECTOR_SLICE documents at a time (`_vectors_after`); between two slices, rows committed meanwhile
# get their documents. So a write is searchable by its words after about one slice's model pass,
# however far the model has fallen behind the writers. A larger backlog (a bulk ingest) is indexed
# batch by batch as before, documents and vectors of _BATCH rows at a time.
DOCUMENTS_FIRST_ROWS = _BATCH
VECTOR_SLICE = 64
# A run takes in rows committed meanwhile for at most this long, then finishes the vectors it has
# and lets go of the scope's lock: on a Celery worker the next queued run (the one each write
# queues, `queue_index`) waits on that lock in a worker slot of its own, which extraction needs too.
TAKE_IN_SECONDS = 10.0
# At most this many documents wait in a run's memory for their vectors; the rest are the run's
# closing `_embed_missing`'s (an anti-join over the scope), so nothing is left without one.
VECTORS_LATER_CAP = 20_000
# A full sweep's hygiene (anti-joins over the whole scope: rows without a document, documents and
# vectors whose row is gone, vectors missing, the speakers) costs about 1.5 s at 100,000 turns, and a
# background run waits for it before the rows it was started for. So a background run over a scope
# of at least FULL_SWEEP_DOCUMENTS documents does it at most every FULL_SWEEP_SECONDS (per process);
# a run in between (`recent`) looks for rows without a document only among the last RECENT_IDS ids
# below the watermarks (a write committed out of id order), in milliseconds.
FULL_SWEEP_DOCUMENTS = 20_000
FULL_SWEEP_SECONDS = 60.0
RECENT_IDS = 20_000
# The hygiene itself goes in steps (a collection's orphans, a span of document ids for missing
# vectors), and a background run documents what was committed meanwhile after each step, so no
# write waits for the whole of it.
EMBED_MISSING_SPAN = 50_000
_full_swept_at: dict[int, float] = {}  # scope id → time.monotonic() of this process's last full background sweep


@dataclass(frozen=True)
class DocSpec:
    collection: str
    target_id: int
    text: str
    occurred_at: datetime | None
    speaker: str = ""


def vector_target(collection: str) -> str:
    """The Embedding.target_type under which a document's vector is stored."""
    return f"doc_{collection}"


# `progress(done, total, stage)` of the run in this context (memoryweb/progress.py), if any.
_progress: ContextVar[Callable[..., None] | None] = ContextVar("index_progress", default=None)
# True while a full run writes a large scope's vectors outside every graph (`_bulk_graphs`).
_outside_graphs: ContextVar[bool] = ContextVar("index_outside_graphs", default=False)
# While a documents-first run writes documents: where `sync_documents` leaves those it wrote
# (document id, spec) for their vectors, instead of making them at once.
_vectors_later: ContextVar[list | None] = ContextVar("index_vectors_later", default=None)


def index_pending(
    *, scope: Scope, full: bool = False, embedder: Embedder | None = None, progress: Callable[..., None] | None = None,
) -> int:
    """Index everything of `scope` not indexed yet; returns how many documents were written.
    Vectors are made with the scope's model (`scope_embedder`) unless `embedder` is given.
    `progress(done, total, stage)`: called after each committed batch (rows of the stage done)."""
    if not full and _pending(scope=scope, model=(embedder or scope_embedder(scope)).name) is False:
        return 0
    state, _ = IndexState.objects.get_or_create(scope=scope)
    token = _progress.set(progress)
    try:
        with _scope_lock(scope):
            # The scope's model is read again under the lock: a reindex switches it under this lock.
            return _index_locked(scope=scope, state=state, full=full, embedder=embedder or scope_embedder(scope))
    finally:
        _progress.reset(token)


def index_if_free(*, scope: Scope) -> int | None:
    """`index_pending(full=True)` unless another run (another process's, recall's catch-up) holds the
    scope's lock: then None at once, and the caller comes back later, since that run's sweep may
    have started before the caller's rows were committed. The background runner's sweep
    (retrieval/background.py), which must never queue behind another indexer."""
    state, _ = IndexState.objects.get_or_create(scope=scope)
    with _scope_lock_if_free(scope) as locked:
        if not locked:
            return None
        return _background_run(scope=scope, state=state)


def episodes_searchable(*, scope: Scope, episode_ids: list) -> set:
    """Which of these episodes (public ids) of `scope` are in the search index: a free-standing
    episode's own document, an episode with a turn its turn's document (its windows and vector are
    written by the same run). One query through the documents' unique (collection, target_id)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT e.public_id FROM memories_episode e WHERE e.scope_id = %s AND e.public_id = ANY(%s::uuid[]) AND EXISTS ("
            " SELECT 1 FROM retrieval_searchdocument d WHERE d.scope_id = e.scope_id"
            " AND d.collection = CASE WHEN e.turn_id IS NULL THEN %s ELSE %s END AND d.target_id = coalesce(e.turn_id, e.id))",
            [scope.pk, [str(i) for i in episode_ids], Collection.EPISODE.value, Collection.TURN.value],
        )
        return {row[0] for row in cursor.fetchall()}


def with_searchable(*, scope: Scope, rows: list[dict], key: str) -> list[dict]:
    """`rows` (episodes as the doors return them, their public id under `key`), each with
    `searchable`: whether recall finds it through the index yet (`episodes_searchable`)."""
    found = {str(i) for i in episodes_searchable(scope=scope, episode_ids=[row[key] for row in rows])} if rows else set()
    for row in rows:
        row["searchable"] = str(row[key]) in found
    return rows


@dataclass(frozen=True)
class Backlog:
    """What is stored but not indexed yet: `pending` rows (counted up to _BACKLOG_COUNT_CAP) above
    these watermarks. `new_model`: documents exist whose vectors were made with another model."""

    pending: int = 0
    fact_mark: int = 0
    episode_mark: int = 0
    turn_mark: int = 0
    new_model: bool = False
    caught_up: bool = False  # the catch-up indexed what was pending (the index state changed)


def index_catch_up(*, scope: Scope, embedder: Embedder, marks: tuple[int, int, int, str] | None = None) -> Backlog:
    """recall's catch-up: index what is pending when that is small and nobody else is indexing
    this scope, without waiting for the lock; return what is left (nothing, usually). `marks`:
    the scope's watermarks and model (`_marks`) when the caller has read its index state already."""
    if _pending(scope=scope, model=embedder.name, marks=marks) is False:
        return Backlog()  # the common case: the one cheap query
    with _scope_lock_if_free(scope) as locked:
        backlog = _backlog(scope=scope, model=embedder.name)
        if not locked or backlog.new_model or backlog.pending > CATCH_UP_ROWS:
            return backlog  # an indexer holds the lock, or re-embedding / a bulk is the task's work
        state, _ = IndexState.objects.get_or_create(scope=scope)
        # Recall waits for this: packing BM25's lexemes is left to the index task's run.
        _index_locked(scope=scope, state=state, full=False, embedder=embedder, pack=False)
    return Backlog(caught_up=True)


def _background_run(*, scope: Scope, state: IndexState) -> int:
    """A background run (the runner's, a worker's; the scope's lock held): documents first, and the
    full sweep's hygiene only when it is due (FULL_SWEEP_SECONDS) or the scope is small."""
    last = _full_swept_at.pop(scope.pk, None)  # a run that fails is followed by a full sweep
    recent = last is not None and time.monotonic() - last < FULL_SWEEP_SECONDS and _documents_at_least(scope, FULL_SWEEP_DOCUMENTS)
    written = _index_locked(scope=scope, state=state, full=True, recent=recent, embedder=scope_embedder(scope), documents_first=True)
    _full_swept_at[scope.pk] = last if recent else time.monotonic()
    return written


# The scope's documents counted up to a cap (params: scope id, cap): a count, not a scan of a large scope.
_DOCUMENTS_UP_TO = "SELECT count(*) FROM (SELECT 1 FROM retrieval_searchdocument WHERE scope_id = %s LIMIT %s) d"


def _documents_at_least(scope: Scope, count: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(_DOCUMENTS_UP_TO, [scope.pk, count])
        return cursor.fetchone()[0] >= count


def _index_locked(
    *, scope: Scope, state: IndexState, full: bool, embedder: Embedder, pack: bool = True, documents_first: bool = False,
    recent: bool = False,
) -> int:
    """One index run under the scope's lock. `full`: rows without a document are looked for by
    anti-joins, not only above the watermarks, and the sweep's hygiene follows; with `recent` only
    among the last RECENT_IDS ids, and no hygiene. `documents_first`: documents before vectors, when
    the backlog is small enough and the model is the one the scope's vectors were made with
    (DOCUMENTS_FIRST_ROWS)."""
    new_speakers: set[str] = set()
    started = time.monotonic()
    state.refresh_from_db()
    if state.model != embedder.name:
        full, recent = True, False
    sweep = full and not recent
    if documents_first:
        backlog = _backlog(scope=scope, model=embedder.name)
        documents_first = not backlog.new_model and backlog.pending <= DOCUMENTS_FIRST_ROWS
    later: list[tuple[int, DocSpec]] | None = [] if documents_first else None
    with vectors_outside_graphs(full and _bulk_graphs(scope=scope, state=state, model=embedder.name)):
        # What the run found pending when it began; the rows a documents-first run takes in meanwhile
        # are a trickle, not a bulk (their count would have the sweep VACUUM under the writers' load).
        bulk = written = _index_new(scope=scope, state=state, full=full, recent=recent, embedder=embedder, speakers=new_speakers, later=later)
        if later is not None:
            meanwhile, forgot = _vectors_after(scope=scope, state=state, embedder=embedder, speakers=new_speakers, later=later,
                                               started=started)
            written += meanwhile
            if forgot and not sweep:
                _embed_missing(scope=scope, embedder=embedder)  # documents the queue forgot, when no sweep follows

        def between() -> None:
            """Between two steps of a background run's hygiene: what was committed meanwhile, documents and vectors."""
            nonlocal written
            if later is not None and time.monotonic() - started < TAKE_IN_SECONDS and _pending(scope=scope, model=embedder.name):
                fresh: list[tuple[int, DocSpec]] = []
                written += _index_new(scope=scope, state=state, full=False, embedder=embedder, speakers=new_speakers, later=fresh)
                written += _vectors_after(scope=scope, state=state, embedder=embedder, speakers=new_speakers, later=fresh,
                                          started=started)[0]

        if sweep:
            if bulk >= BULK_DOCUMENTS:
                _analyze()
            orphans_remove(scope=scope, between=between)
            _embed_missing(scope=scope, embedder=embedder, between=between)
    graph_at = int(settings.RETRIEVAL_SCOPE_GRAPH_AT)
    if sweep:
        if graph_at and _vectors_up_to(scope=scope, model=embedder.name, cap=graph_at) >= graph_at:
            progress = _progress.get()
            if progress:
                progress(0, 1, stage="graphs")
            scope_graphs_build(scope=scope, embedder=embedder)  # the ones it lacks (none, usually)
            if progress:
                progress(1, 1, stage="graphs")
        elif not vectors_deferrable(scope=scope, model=embedder.name, adding=0):
            vectors_undefer(scope=scope, model=embedder.name)  # others' writes grew the scope past exact search
    # A large scope's frequent lexemes packed for BM25, or packed again when rows have piled up after them.
    if pack:
        from retrieval.packs import packs_refresh  # packs reads through fulltext, which imports this module

        packs_refresh(scope=scope, progress=_progress.get() if full else None)
    vector_changes_prune(scope.pk)
    state.model = embedder.name
    if sweep:
        state.speakers = _speakers(scope)
    else:
        state.speakers = sorted(set(state.speakers) | new_speakers)[: MAX_SPEAKERS + 1]
    state.updated_at = timezone.now()
    state.save(update_fields=["model", "speakers", "updated_at"])
    return written


def _index_new(
    *, scope: Scope, state: IndexState, full: bool, embedder: Embedder, speakers: set[str], later: list | None,
    recent: bool = False,
) -> int:
    """Documents (and, unless `later` collects them, vectors) for the facts, free-standing episodes
    and turns not indexed yet: above the watermarks, or with `full` every one without a document
    (with `recent`, every one among the last RECENT_IDS ids below the watermarks and above them)."""
    token = _vectors_later.set(later)
    floor = RECENT_IDS if recent else None
    try:
        return (_index_facts(scope=scope, state=state, full=full, embedder=embedder, floor=floor)
                + _index_episodes(scope=scope, state=state, full=full, embedder=embedder, speakers=speakers, floor=floor)
                + _index_turns(scope=scope, state=state, full=full, embedder=embedder, speakers=speakers, floor=floor))
    finally:
        _vectors_later.reset(token)


def _vectors_after(
    *, scope: Scope, state: IndexState, embedder: Embedder, speakers: set[str], later: list, started: float,
) -> tuple[int, bool]:
    """The vectors of the documents a documents-first run wrote (`later`), VECTOR_SLICE at a time,
    documents with a vector of their own before windows (composed from their turns' vectors);
    after each slice, up to TAKE_IN_SECONDS after the run `started`, the documents of rows committed above the
    watermarks meanwhile (the cheap check, `_pending`), whose vectors join the queue. Returns the documents written meanwhile, and
    whether the queue forgot some (beyond VECTORS_LATER_CAP), which `_embed_missing` then finds."""
    written, forgot = 0, False
    while later:
        later.sort(key=lambda item: _composed(item[1]))  # stable: in order of writing otherwise
        part = later[:VECTOR_SLICE]
        del later[:VECTOR_SLICE]
        _embed(scope=scope, docs=part, embedder=embedder)
        if time.monotonic() - started < TAKE_IN_SECONDS and _pending(scope=scope, model=embedder.name):
            written += _index_new(scope=scope, state=state, full=False, embedder=embedder, speakers=speakers, later=later)
            forgot = forgot or len(later) > VECTORS_LATER_CAP
            del later[VECTORS_LATER_CAP:]
    return written, forgot


def _analyze() -> None:
    """Fresh planner statistics after a bulk write: on tables whose statistics still say "empty"
    (a first import, before autovacuum came by), the sweep's anti-joins are planned as a scan of
    every vector per document (measured: 1.5 s of a 1,000-turn index run, now milliseconds).
    Outside a transaction the documents and postings are VACUUMed too, which marks their new
    pages all-visible: until then BM25's index-only scan of the postings visits the table for
    each one (a question on a conversation just imported: 4,369 such visits; BM25 p50 on the
    LOCOMO dev pair 8.2 → 6.7 ms). VACUUM passes over pages already all-visible, so it costs
    what was written; it waits for no writer, and SKIP_LOCKED leaves a table another VACUUM
    holds (another indexer's, autovacuum's) to that one."""
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            cursor.execute("ANALYZE retrieval_searchdocument, retrieval_embedding")
        else:
            cursor.execute("VACUUM (ANALYZE, SKIP_LOCKED) retrieval_searchdocument, retrieval_posting")
            cursor.execute("ANALYZE retrieval_embedding")


def _bulk_graphs(*, scope: Scope, state: IndexState, model: str) -> bool:
    """Whether this full run should write the scope's vectors outside every graph, to be put in
    graphs of the scope's own built once at the end (`scope_graphs_build`): the scope has them
    already (a vector written into the shared graph would be in the wrong one), or it will hold
    RETRIEVAL_SCOPE_GRAPH_AT vectors once its pending turns (three documents each) are indexed. A run
    interrupted before the build leaves the vectors deferred, which recall then searches exactly
    (retrieval/vector.py), and the next full run builds the graphs."""
    return _graphs_due(
        scope=scope, model=model,
        sql=f"SELECT {SCOPE_VECTORS_UP_TO} + 3 * (SELECT count(*) FROM (SELECT 1 FROM memories_turn WHERE scope_id = %s AND id > %s LIMIT %s) t)",
        params=lambda cap: [scope.pk, model, cap, scope.pk, state.turn_mark, cap],
    )


def reindex_into_own_graphs(*, scope: Scope, model: str) -> bool:
    """Whether a reindex of the scope to `model` should write its vectors outside every graph, for
    graphs of the scope's own built before the switch (`scope_graphs_build`): it has them for
    `model` already, or its documents (one vector each) reach RETRIEVAL_SCOPE_GRAPH_AT. Into the
    shared graph, a large scope's vectors would go one graph insert at a time."""
    return _graphs_due(
        scope=scope, model=model, sql=_DOCUMENTS_UP_TO,
        params=lambda cap: [scope.pk, cap],
    )


def _graphs_due(*, scope: Scope, model: str, sql: str, params: Callable[[int], list]) -> bool:
    """The scope has graphs of its own for `model`, or `sql` (the vectors it will hold, counted up
    to the cap `params` is given) reaches RETRIEVAL_SCOPE_GRAPH_AT."""
    graph_at = int(settings.RETRIEVAL_SCOPE_GRAPH_AT)
    if not graph_at:
        return False
    if scope_graphs(scope_id=scope.pk, model=model):
        return True
    with connection.cursor() as cursor:
        cursor.execute(sql, params(graph_at))
        return cursor.fetchone()[0] >= graph_at


@contextmanager
def vectors_outside_graphs(outside: bool = True):
    """Within: the document vectors written are kept out of the shared graph (`Embedding.deferred`),
    for graphs of the scope's own (as a bulk index run writes them)."""
    token = _outside_graphs.set(outside)
    try:
        yield
    finally:
        _outside_graphs.reset(token)


def _vectors_up_to(*, scope: Scope, model: str, cap: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + SCOPE_VECTORS_UP_TO, [scope.pk, model, cap])
        return cursor.fetchone()[0]


def _pending(*, scope: Scope, model: str, marks: tuple[int, int, int, str] | None = None) -> bool | None:
    """Whether rows above the watermarks wait, or a new embedding model is in force while
    documents exist (every document then needs its vector for it): the one query a recall
    makes when nothing is pending. None: the scope has no index state yet."""
    state = marks or _marks(scope)
    if state is None:
        return None
    fact_mark, episode_mark, turn_mark, indexed_model = state
    with connection.cursor() as cursor:
        # The marks go in as constants: the planner then reads `id > mark` from the primary key
        # (and finds nothing at once); as columns of a join it may scan the scope instead.
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM memories_fact WHERE scope_id = %s AND id > %s)"
            " OR EXISTS (SELECT 1 FROM memories_episode WHERE scope_id = %s AND id > %s AND turn_id IS NULL)"
            " OR EXISTS (SELECT 1 FROM memories_turn WHERE scope_id = %s AND id > %s)"
            " OR %s AND EXISTS (SELECT 1 FROM retrieval_searchdocument WHERE scope_id = %s)",
            [scope.pk, fact_mark, scope.pk, episode_mark, scope.pk, turn_mark, indexed_model != model, scope.pk],
        )
        return bool(cursor.fetchone()[0])


def index_behind(*, scope: Scope, model: str) -> bool:
    """Whether the scope has rows its index has not caught up with (or no index yet while it has
    rows), cheaply: the watermark check, not the full sweep. Rows committed out of id order are
    not seen here; the next index run's full sweep finds them."""
    pending = _pending(scope=scope, model=model)
    if pending is not None:
        return pending
    return (Fact.objects.in_scope(scope).exists() or Turn.objects.in_scope(scope).exists()
            or Episode.objects.in_scope(scope).filter(turn__isnull=True).exists())


def _marks(scope: Scope) -> tuple[int, int, int, str] | None:
    """The scope's watermarks (fact, episode, turn) and the model its vectors were made with."""
    return IndexState.objects.filter(scope=scope).values_list("fact_mark", "episode_mark", "turn_mark", "model").first()


def _backlog(*, scope: Scope, model: str) -> Backlog:
    fact_mark, episode_mark, turn_mark, indexed_model = _marks(scope) or (0, 0, 0, "")
    cap = _BACKLOG_COUNT_CAP
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM (SELECT 1 FROM memories_fact WHERE scope_id = %s AND id > %s LIMIT %s) f)"
            " + (SELECT count(*) FROM (SELECT 1 FROM memories_episode WHERE scope_id = %s AND id > %s AND turn_id IS NULL LIMIT %s) e)"
            " + (SELECT count(*) FROM (SELECT 1 FROM memories_turn WHERE scope_id = %s AND id > %s LIMIT %s) t),"
            " %s AND EXISTS (SELECT 1 FROM retrieval_searchdocument WHERE scope_id = %s)",
            [scope.pk, fact_mark, cap, scope.pk, episode_mark, cap, scope.pk, turn_mark, cap, indexed_model != model, scope.pk],
        )
        pending, new_model = cursor.fetchone()
    return Backlog(min(pending, cap), fact_mark, episode_mark, turn_mark, bool(new_model))


@contextmanager
def _scope_lock(scope: Scope):
    """Serialise indexers of one scope (term counters are read-modify-write); other scopes go on."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [_LOCK_NAMESPACE, scope.pk])
    try:
        yield
    finally:
        _scope_unlock(scope)


@contextmanager
def _scope_lock_if_free(scope: Scope):
    """The scope's indexing lock if nobody holds it (yields True), else at once False: recall must
    not wait while an indexer embeds."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_LOCK_NAMESPACE, scope.pk])
        locked = bool(cursor.fetchone()[0])
    try:
        yield locked
    finally:
        if locked:
            _scope_unlock(scope)


scope_lock = _scope_lock  # for the reindex (retrieval/reindex.py), which embeds under it batch by batch


def _scope_unlock(scope: Scope) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_LOCK_NAMESPACE, scope.pk])


def _missing_ids(*, scope: Scope, table: str, collection: str, extra: str = "", above: int = 0) -> list[int]:
    """The scope's rows of `table` with an id above `above` and no document in `collection`."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT t.id FROM {table} t WHERE t.scope_id = %s AND t.id > %s {extra} AND NOT EXISTS ("
            " SELECT 1 FROM retrieval_searchdocument d WHERE d.collection = %s AND d.target_id = t.id) ORDER BY t.id",
            [scope.pk, above, collection],
        )
        return [row[0] for row in cursor.fetchall()]


def _index_facts(*, scope: Scope, state: IndexState, full: bool, embedder: Embedder, floor: int | None = None) -> int:
    facts = Fact.objects.in_scope(scope).select_related("subject").order_by("id")
    written = 0
    if full:
        # Facts are never rewritten in place (a correction is a new fact), so the sweep only
        # looks for facts with no document: an index-backed anti-join, not a scan in Python.
        ids = _missing_ids(scope=scope, table="memories_fact", collection=Collection.FACT, above=_below(state.fact_mark, floor))
        batches = _chunks(list(facts.filter(id__in=ids).only("id", "sentence", "valid_from", "created_at", "subject__name")))
    else:
        batches = _paged(facts.filter(id__gt=state.fact_mark))
    for batch in batches:
        written += sync_documents(scope=scope, specs=[fact_spec(f) for f in batch], embedder=embedder)
        state.fact_mark = max(state.fact_mark, batch[-1].pk)
        state.save(update_fields=["fact_mark"])
    return written


def _below(mark: int, floor: int | None) -> int:
    """Where a sweep's anti-join starts: the first id (0), or `floor` ids below the watermark."""
    return 0 if floor is None else max(0, mark - floor)


def fact_spec(fact: Fact) -> DocSpec:
    """A fact's document as a fresh build writes it (`fact.subject` loaded)."""
    return DocSpec(
        Collection.FACT, fact.pk, fact_document(sentence=fact.sentence, subject=fact.subject.name),
        fact.valid_from or fact.created_at, fact.subject.name,
    )


def _index_episodes(
    *, scope: Scope, state: IndexState, full: bool, embedder: Embedder, speakers: set[str], floor: int | None = None,
) -> int:
    # Episodes with a turn are found through their turn's documents; only free-standing ones
    # (remember() without a session) are documents of their own.
    episodes = Episode.objects.in_scope(scope).filter(turn__isnull=True).order_by("id")
    if full:
        ids = _missing_ids(scope=scope, table="memories_episode", collection=Collection.EPISODE, extra="AND t.turn_id IS NULL",
                           above=_below(state.episode_mark, floor))
        batches = _chunks(list(episodes.filter(id__in=ids)))
    else:
        batches = _paged(episodes.filter(id__gt=state.episode_mark))
    written = 0
    for batch in batches:
        specs = [
            DocSpec(Collection.EPISODE, e.pk, turn_document(speaker=e.speaker, text=e.text, occurred_at=e.occurred_at), e.occurred_at, e.speaker)
            for e in batch
        ]
        speakers.update(e.speaker for e in batch if e.speaker)
        written += sync_documents(scope=scope, specs=specs, embedder=embedder)
        state.episode_mark = max(state.episode_mark, batch[-1].pk)
        state.save(update_fields=["episode_mark"])
    return written


def _index_turns(
    *, scope: Scope, state: IndexState, full: bool, embedder: Embedder, speakers: set[str], floor: int | None = None,
) -> int:
    turns = Turn.objects.in_scope(scope).order_by("id")
    if full:
        ids = _missing_ids(scope=scope, table="memories_turn", collection=Collection.TURN, above=_below(state.turn_mark, floor))
        batches = _chunks(list(turns.filter(id__in=ids).only("id", "session_id", "position")))
    else:
        batches = _paged(turns.filter(id__gt=state.turn_mark).only("id", "session_id", "position"))
    written = done = 0
    progress = _progress.get() if full else None
    for batch in batches:
        written += _index_turn_batch(scope=scope, new_turns=batch, embedder=embedder, speakers=speakers)
        state.turn_mark = max(state.turn_mark, batch[-1].pk)
        state.save(update_fields=["turn_mark"])
        done += len(batch)
        if progress:
            progress(done, len(ids), stage="turns")
    return written


def _index_turn_batch(*, scope: Scope, new_turns: list[Turn], embedder: Embedder, speakers: set[str]) -> int:
    """Documents for new turns, and the windows around them: a window centred on an older turn
    changes when its session grows, so those are rewritten too (unchanged ones are skipped)."""
    radius = max(WINDOW_RADII.values())
    first_new: dict[int, int] = {}
    new_ids = {t.pk for t in new_turns}
    for turn in new_turns:
        first_new[turn.session_id] = min(first_new.get(turn.session_id, turn.position), turn.position)
    by_session = _session_tails(scope=scope, starts={s: p - 2 * radius for s, p in first_new.items()})
    specs: list[DocSpec] = []
    for session_id, position in first_new.items():
        rows = by_session.get(session_id, [])
        for index, (turn_id, turn_pos, speaker, text, occurred_at) in enumerate(rows):
            if turn_id in new_ids:
                specs.append(DocSpec(Collection.TURN, turn_id, turn_document(speaker=speaker, text=text, occurred_at=occurred_at), occurred_at, speaker))
            for collection, r in WINDOW_RADII.items():
                if turn_pos < position - r:
                    continue
                members = [(row[2], row[3]) for row in rows[max(0, index - r) : index + r + 1]]
                specs.append(DocSpec(collection, turn_id, window_document(centre_at=occurred_at, members=members), occurred_at, speaker))
    speakers.update(s.speaker for s in specs if s.speaker)
    return sync_documents(scope=scope, specs=specs, embedder=embedder)


def _session_tails(*, scope: Scope, starts: dict[int, int]) -> dict[int, list[tuple]]:
    """Each session's turns from a position on, in order, as (id, position, speaker, text,
    occurred_at), in one query for all the sessions of a batch: the windows centred from a batch's
    first new turn minus the radius need members from twice the radius before it."""
    out: dict[int, list[tuple]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.session_id, t.id, t.position, t.speaker, t.text, t.occurred_at FROM memories_turn t"
            " JOIN unnest(%s::bigint[], %s::integer[]) AS f(session_id, start) ON t.session_id = f.session_id AND t.position >= f.start"
            " WHERE t.scope_id = %s ORDER BY t.session_id, t.position",
            [list(starts), list(starts.values()), scope.pk],
        )
        for session_id, *row in cursor.fetchall():
            out[session_id].append(tuple(row))
    return out


def sync_documents(*, scope: Scope, specs: list[DocSpec], embedder: Embedder) -> int:
    """Insert new documents, rewrite changed ones, skip identical ones; keep the term statistics
    exact; embed what is new, changed or lacks a vector for the model in force."""
    if not specs:
        return 0
    by_key = {(s.collection, s.target_id): s for s in specs}
    existing = _existing(scope=scope, keys=list(by_key), model=embedder.name)
    new = [s for key, s in by_key.items() if key not in existing]
    changed = [(existing[key][0], s) for key, s in by_key.items() if key in existing and existing[key][1] != s.text]
    unembedded = [(existing[key][0], s) for key, s in by_key.items() if key in existing and existing[key][1] == s.text and not existing[key][2]]
    later = _vectors_later.get()  # a documents-first run makes the vectors after (`_vectors_after`)
    # The model works on its own thread while the documents, statistics and postings are written:
    # they need only the texts, and the vectors are written after the commit, as before.
    vectors = None if later is not None else soon(lambda: _model_vectors(specs=new + [s for _, s in changed + unembedded], embedder=embedder))
    with transaction.atomic():
        inserted = _insert(scope=scope, specs=new)
        if changed:
            ids = [doc_id for doc_id, _ in changed]
            _stats(scope=scope, doc_ids=ids, sign=-1)
            _rewrite(changed)
            _stats(scope=scope, doc_ids=ids, sign=+1)
            _postings(doc_ids=ids)
        if inserted:
            ids = [doc_id for doc_id, _ in inserted]
            _stats(scope=scope, doc_ids=ids, sign=+1)
            _postings(doc_ids=ids)
    if later is not None:
        later.extend(inserted + changed + unembedded)
    else:
        _embed(scope=scope, docs=inserted + changed + unembedded, embedder=embedder, vectors=vectors.get())
    return len(inserted) + len(changed)


def _existing(*, scope: Scope, keys: list[tuple[str, int]], model: str) -> dict[tuple[str, int], tuple[int, str, bool]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.collection, d.target_id, d.id, d.text, EXISTS ("
            "  SELECT 1 FROM retrieval_embedding e WHERE e.target_type = 'doc_' || d.collection AND e.target_id = d.id AND e.model = %s)"
            " FROM retrieval_searchdocument d JOIN unnest(%s::text[], %s::bigint[]) AS k(c, t) ON d.collection = k.c AND d.target_id = k.t"
            " WHERE d.scope_id = %s",
            [model, [c for c, _ in keys], [t for _, t in keys], scope.pk],
        )
        return {(c, t): (doc_id, text, has_vec) for c, t, doc_id, text, has_vec in cursor.fetchall()}


def _insert(*, scope: Scope, specs: list[DocSpec]) -> list[tuple[int, DocSpec]]:
    if not specs:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO retrieval_searchdocument (scope_id, collection, target_id, text, tsv, length, speaker, occurred_at, indexed_at)"
            " SELECT %s, c, t, x, v, (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(v) u), sp, o, now()"
            " FROM (SELECT c, t, x, o, sp, to_tsvector('english', x) AS v"
            "       FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::timestamptz[], %s::text[]) AS i(c, t, x, o, sp)) s"
            " ON CONFLICT (collection, target_id, scope_id) DO NOTHING RETURNING id, collection, target_id",
            [
                scope.pk, [s.collection for s in specs], [s.target_id for s in specs], [s.text for s in specs],
                [s.occurred_at for s in specs], [s.speaker[:200] for s in specs],
            ],
        )
        by_key = {(s.collection, s.target_id): s for s in specs}
        return [(doc_id, by_key[(c, t)]) for doc_id, c, t in cursor.fetchall()]


def _rewrite(changed: list[tuple[int, DocSpec]]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE retrieval_searchdocument d SET text = s.x, tsv = s.v, occurred_at = s.o, speaker = s.sp, indexed_at = now(),"
            " length = (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(s.v) u)"
            " FROM (SELECT i, x, o, sp, to_tsvector('english', x) AS v"
            "       FROM unnest(%s::bigint[], %s::text[], %s::timestamptz[], %s::text[]) AS k(i, x, o, sp)) s"
            " WHERE d.id = s.i",
            [
                [doc_id for doc_id, _ in changed], [s.text for _, s in changed], [s.occurred_at for _, s in changed],
                [s.speaker[:200] for _, s in changed],
            ],
        )


def _stats(*, scope: Scope, doc_ids: list[int], sign: int) -> None:
    """Add (sign +1) or remove (-1) these documents' lexemes, count and lengths from the statistics."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO retrieval_termstat (scope_id, collection, lexeme, df)"
            " SELECT %s, d.collection, l.lexeme, %s * count(*)"
            " FROM retrieval_searchdocument d CROSS JOIN LATERAL unnest(tsvector_to_array(d.tsv)) AS l(lexeme)"
            " WHERE d.id = ANY(%s) GROUP BY d.collection, l.lexeme"
            " ON CONFLICT (scope_id, collection, lexeme) DO UPDATE SET df = retrieval_termstat.df + EXCLUDED.df",
            [scope.pk, sign, doc_ids],
        )
        cursor.execute(
            "INSERT INTO retrieval_corpusstat (scope_id, collection, doc_count, total_length)"
            " SELECT %s, collection, %s * count(*), %s * sum(length) FROM retrieval_searchdocument"
            " WHERE id = ANY(%s) GROUP BY collection"
            " ON CONFLICT (scope_id, collection) DO UPDATE SET doc_count = retrieval_corpusstat.doc_count + EXCLUDED.doc_count,"
            " total_length = retrieval_corpusstat.total_length + EXCLUDED.total_length",
            [scope.pk, sign, sign, doc_ids],
        )
        if sign < 0:
            cursor.execute("DELETE FROM retrieval_termstat WHERE scope_id = %s AND df <= 0", [scope.pk])


def _postings(*, doc_ids: list[int]) -> None:
    """(Re)write these documents' postings from their tsvectors: one row per lexeme, with its
    term frequency (positions; PostgreSQL keeps up to 256), the document's length and speaker."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM retrieval_posting WHERE document_id = ANY(%s)", [doc_ids])
        cursor.execute(
            "INSERT INTO retrieval_posting (scope_id, collection, lexeme, document_id, tf, length, speaker)"
            " SELECT d.scope_id, d.collection, u.lexeme, d.id, cardinality(u.positions), d.length, d.speaker"
            " FROM retrieval_searchdocument d CROSS JOIN LATERAL unnest(d.tsv) u WHERE d.id = ANY(%s)",
            [doc_ids],
        )


def _model_vectors(*, specs: list[DocSpec], embedder: Embedder) -> dict[str, list[float]]:
    """One model pass over the distinct vector texts of these documents that have a vector of
    their own (facts, episodes, turns; windows too when RETRIEVAL_WINDOW_VECTORS=text), by text.
    Touches no database, so it can run beside the documents' writes."""
    distinct = list(dict.fromkeys(_vector_text(spec) for spec in specs if not _composed(spec)))
    return dict(zip(distinct, embedder.embed(distinct))) if distinct else {}


def _composed(spec: DocSpec) -> bool:
    return spec.collection in WINDOW_RADII and settings.RETRIEVAL_WINDOW_VECTORS == "composed"


def _embed(*, scope: Scope, docs: list[tuple[int, DocSpec]], embedder: Embedder, vectors: dict[str, list[float]] | None = None) -> None:
    """Write these documents' vectors: those `_model_vectors` made (`vectors`, by text; made now
    when not given), then each window's composed from its member turns' vectors (`window_vectors`),
    no model pass of its own; one write per target type."""
    if vectors is None:
        vectors = _model_vectors(specs=[spec for _, spec in docs], embedder=embedder)
    windows = [(doc_id, spec) for doc_id, spec in docs if _composed(spec)]
    own = [(doc_id, spec) for doc_id, spec in docs if not _composed(spec)]
    _store(scope=scope, docs=own, vectors=vectors, embedder=embedder)
    if windows:
        turn_vectors = {spec.target_id: vectors[_vector_text(spec)] for _, spec in own if spec.collection == Collection.TURN}
        _store(scope=scope, docs=windows, embedder=embedder,
               vectors=window_vectors(scope=scope, windows=windows, turn_vectors=turn_vectors, embedder=embedder))


def _store(*, scope: Scope, docs: list[tuple[int, DocSpec]], vectors: dict[str, list[float]], embedder: Embedder) -> None:
    """Write these documents' vectors (from `vectors` by text, the rest embedded now), one write
    per target type in one transaction. While the scope stays small enough to be searched exactly
    they are left out of the HNSW graph (`vectors_deferrable`); once it is not, every vector it
    had left out goes in."""
    if not docs:
        return
    by_collection: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for doc_id, spec in docs:
        by_collection[spec.collection].append((doc_id, _vector_text(spec)))
    cached = _Cached(embedder, vectors)
    found = {collection: cached.embed([text for _, text in items]) for collection, items in by_collection.items()}
    ensure_model_index(embedder)
    deferred = vectors_deferrable(scope=scope, model=embedder.name, adding=len(docs))
    writes = [(vector_target(collection), [(doc_id, vec) for (doc_id, _), vec in zip(items, found[collection])])
              for collection, items in by_collection.items()]

    def write(part: list[tuple[str, list]]):
        def run() -> None:
            with transaction.atomic():
                for target_type, rows in part:
                    vectors_write(scope=scope, target_type=target_type, model=embedder.name, deferred=deferred, rows=rows)
        return run

    if deferred or len(docs) < GRAPH_SPLIT_ROWS:
        write(writes)()
    else:
        # Into the graph, each row is most of its write's cost, and one backend inserts them one
        # by one: half the rows go through a second connection at the same time (outside a
        # transaction and while no search is in flight; else one after the other). Each half is
        # an idempotent upsert of its own rows, so one that fails on its connection runs again here.
        side_by_side(write([(t, rows[0::2]) for t, rows in writes]), write([(t, rows[1::2]) for t, rows in writes]))
    if not deferred:
        vectors_undefer(scope=scope, model=embedder.name)


def vectors_deferrable(*, scope: Scope, model: str, adding: int) -> bool:
    """Whether `adding` more vectors of `model` can stay out of its HNSW graph: the scope will
    still hold fewer than RETRIEVAL_EXACT_BELOW of them, so recall searches it exactly
    (retrieval/vector.py), which reads the vectors without the graph. Measured: the graph insert
    was most of a vector's write (about 1.2 ms a row on the loaded 2-core machine, against 0.01 ms
    for the row itself), and most of a turn's indexing after the model. A large scope's vectors
    (a bulk run's, `_bulk_graphs`, or a scope with graphs of its own) stay out of the shared graph
    too. Ask under the scope's lock."""
    if _outside_graphs.get() or scope_graphs(scope_id=scope.pk, model=model):
        return True  # a large scope's: its own graphs take them (the partial indexes' predicate)
    threshold = int(settings.RETRIEVAL_EXACT_BELOW)
    if threshold <= 0 or adding >= threshold:
        return False
    return _vectors_up_to(scope=scope, model=model, cap=threshold) + adding < threshold


def vectors_undefer(*, scope: Scope, model: str) -> int:
    """Put the scope's deferred vectors of `model` into its HNSW graph (the scope outgrew exact
    search); returns how many (0 at once when none is deferred: a partial index)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE retrieval_embedding SET deferred = false WHERE scope_id = %s AND model = %s AND deferred",
            [scope.pk, model],
        )
        return cursor.rowcount


def _vector_text(spec: DocSpec) -> str:
    """What the document's vector is made from (retrieval/documents.py: vector_text)."""
    return vector_text(collection=spec.collection, text=spec.text, speaker=spec.speaker)


def window_vectors(
    *, scope: Scope, windows: list[tuple[int, DocSpec]], turn_vectors: dict[int, list[float]], embedder: Embedder,
) -> dict[str, list[float]]:
    """Each window's vector (by its vector text, `_vector_text`): the normalised mean of its member turns' vectors (the
    turns within its radius in the session, by order), from `turn_vectors` (turn id → vector) or
    the turns' stored document vectors of this model. A window a member of which has no turn
    vector (not indexed yet) is embedded from its own text instead. Measured on LOCOMO, this
    keeps evidence recall while a turn costs one model pass instead of three (docs/ARCHITECTURE.md)."""
    import numpy as np

    members = _window_members(windows)
    wanted = sorted({m for ids in members.values() for m in ids} - set(turn_vectors))
    known = dict(turn_vectors)
    if wanted:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT d.target_id, d.id, d.text, d.speaker, e.vec::text FROM retrieval_searchdocument d LEFT JOIN retrieval_embedding e"
                " ON e.target_type = %s AND e.target_id = d.id AND e.model = %s"
                " WHERE d.scope_id = %s AND d.collection = %s AND d.target_id = ANY(%s)",
                [vector_target(Collection.TURN), embedder.name, scope.pk, Collection.TURN, wanted],
            )
            rows = cursor.fetchall()
        known.update((turn_id, json.loads(vec)) for turn_id, _, _, _, vec in rows if vec is not None)
        # Member turns whose own vector is missing too (a new model being filled in batch by
        # batch): embedded and stored now, as the sweep would.
        unembedded = [
            (doc_id, DocSpec(Collection.TURN, turn_id, text, None, speaker)) for turn_id, doc_id, text, speaker, vec in rows if vec is None
        ]
        if unembedded:
            texts = list(dict.fromkeys(_vector_text(spec) for _, spec in unembedded))
            vectors = dict(zip(texts, embedder.embed(texts)))
            _store(scope=scope, docs=unembedded, vectors=vectors, embedder=embedder)
            known.update((spec.target_id, vectors[_vector_text(spec)]) for _, spec in unembedded)
    out: dict[str, list[float]] = {}
    fallback: list[str] = []
    arrays: dict[int, np.ndarray] = {}  # each turn's vector converted once, not once per window holding it
    for doc_id, spec in windows:
        ids = members.get((spec.collection, spec.target_id), [])
        if not ids or any(m not in known for m in ids):
            fallback.append(_vector_text(spec))
            continue
        for m in ids:
            if m not in arrays:
                arrays[m] = np.asarray(known[m], dtype=np.float64)
        mean = np.mean(np.stack([arrays[m] for m in ids]), axis=0)
        norm = float(np.linalg.norm(mean)) or 1.0
        out[_vector_text(spec)] = (mean / norm).tolist()
    fallback = [text for text in dict.fromkeys(fallback) if text not in out]
    if fallback:
        out.update(zip(fallback, embedder.embed(fallback)))
    return out


def _window_members(windows: list[tuple[int, DocSpec]]) -> dict[tuple[str, int], list[int]]:
    """(collection, centre turn id) → the ids of the turns the window holds: the centre and up to
    its radius of turns on each side in the session, by position order (gaps do not matter)."""
    out: dict[tuple[str, int], list[int]] = {}
    with connection.cursor() as cursor:
        for collection, radius in WINDOW_RADII.items():
            centres = sorted({spec.target_id for _, spec in windows if spec.collection == collection})
            if not centres:
                continue
            cursor.execute(
                "SELECT c.id, ARRAY(SELECT t.id FROM memories_turn t WHERE t.session_id = c.session_id AND t.position < c.position"
                "  ORDER BY t.position DESC LIMIT %s) || c.id"
                " || ARRAY(SELECT t.id FROM memories_turn t WHERE t.session_id = c.session_id AND t.position > c.position"
                "  ORDER BY t.position LIMIT %s)"
                " FROM memories_turn c WHERE c.id = ANY(%s)",
                [radius, radius, centres],
            )
            out.update(((collection, centre), list(ids)) for centre, ids in cursor.fetchall())
    return out


class _Cached:
    """An embedder that answers from vectors computed already (same name and dimension)."""

    def __init__(self, embedder: Embedder, vectors: dict[str, list[float]]):
        self.name, self.dim, self._embedder, self._vectors = embedder.name, embedder.dim, embedder, vectors

    def embed(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self._embedder.embed(missing)))
        return [self._vectors[t] for t in texts]


def _embed_missing(*, scope: Scope, embedder: Embedder, between: Callable[[], None] = lambda: None) -> None:
    """Vectors missing for the model in force (a crash between the two steps, a new model): the
    scope's documents looked at EMBED_MISSING_SPAN ids at a time, `between()` after each span."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id) FROM retrieval_searchdocument WHERE scope_id = %s", [scope.pk])
        first, last = cursor.fetchone()
    if first is None:
        return
    for start in range(first - 1, last, EMBED_MISSING_SPAN):
        while documents_embed_missing(scope=scope, embedder=embedder, limit=_BATCH, ids=(start, start + EMBED_MISSING_SPAN)):
            pass
        between()


def documents_embed_missing(*, scope: Scope, embedder: Embedder, limit: int, ids: tuple[int, int] | None = None) -> int:
    """Embed up to `limit` of the scope's documents that have no vector for `embedder`'s model,
    in id order (with `ids` (a, b), those with a < id <= b); returns how many (0: none is
    missing). Hold the scope's lock (`scope_lock`)."""
    low, high = ids or (0, 2**63 - 1)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.id, d.collection, d.target_id, d.text, d.speaker FROM retrieval_searchdocument d WHERE d.scope_id = %s"
            " AND d.id > %s AND d.id <= %s AND NOT EXISTS ("
            " SELECT 1 FROM retrieval_embedding e WHERE e.target_type = 'doc_' || d.collection AND e.target_id = d.id AND e.model = %s)"
            " ORDER BY d.id LIMIT %s",
            [scope.pk, low, high, embedder.name, limit],
        )
        rows = cursor.fetchall()
    _embed(scope=scope, docs=[(i, DocSpec(c, t, x, None, sp)) for i, c, t, x, sp in rows], embedder=embedder)
    return len(rows)


MAX_SPEAKERS = 500


def _speakers(scope: Scope) -> list[str]:
    """The scope's distinct speakers, at most MAX_SPEAKERS + 1: a longer list means "too many
    to tell apart", and a scope of many speakers gets no speaker boost."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT speaker FROM retrieval_searchdocument WHERE scope_id = %s AND collection IN ('turn', 'episode')"
            " AND speaker <> '' LIMIT %s",
            [scope.pk, MAX_SPEAKERS + 1],
        )
        return sorted(row[0] for row in cursor.fetchall())


def _paged(queryset):
    """Batches of a queryset ordered by id, re-queried from the last id (rows may arrive meanwhile)."""
    last = 0
    while True:
        batch = list(queryset.filter(id__gt=last)[:_BATCH])
        if not batch:
            return
        yield batch
        last = batch[-1].pk


def _chunks(rows: list):
    for start in range(0, len(rows), _BATCH):
        yield rows[start : start + _BATCH]


# Forgetting (retrieval/forget.py) removes and rewrites documents inside its own transaction,
# so it takes the indexers' lock for that transaction rather than for the session.


def scope_lock_for_transaction(scope: Scope) -> None:
    """Hold the scope's indexing lock until the current transaction ends: an indexer waits, and
    then sees what the transaction committed, so it cannot put back a document being erased.
    A transaction-level advisory lock conflicts with the session-level one `index_pending` takes."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_NAMESPACE, scope.pk])


def documents_erase(*, scope: Scope, doc_ids: list[int]) -> dict[str, int]:
    """Delete these documents with their postings and vectors (every model), taking them out of
    the term statistics exactly. Call inside a transaction holding `scope_lock_for_transaction`.
    Returns how many rows of each kind went."""
    if not doc_ids:
        return {"documents": 0, "postings": 0, "vectors": 0}
    _stats(scope=scope, doc_ids=doc_ids, sign=-1)
    with connection.cursor() as cursor:
        # A collection left empty has no statistics row, as after a fresh build.
        cursor.execute("DELETE FROM retrieval_corpusstat WHERE scope_id = %s AND doc_count <= 0", [scope.pk])
        cursor.execute("DELETE FROM retrieval_posting WHERE document_id = ANY(%s)", [doc_ids])
        postings = cursor.rowcount
        cursor.execute(
            "DELETE FROM retrieval_embedding e USING retrieval_searchdocument d"
            " WHERE d.id = ANY(%s) AND e.target_type = 'doc_' || d.collection AND e.target_id = d.id",
            [doc_ids],
        )
        vectors = cursor.rowcount
        cursor.execute("DELETE FROM retrieval_searchdocument WHERE scope_id = %s AND id = ANY(%s)", [scope.pk, doc_ids])
        documents = cursor.rowcount
    return {"documents": documents, "postings": postings, "vectors": vectors}


def documents_rewrite(*, scope: Scope, specs: list[DocSpec]) -> list[int]:
    """Give existing documents new text (statistics and postings kept exact) and drop their
    vectors, which described the old text; `documents_embed` makes new ones after the commit.
    Unchanged documents are left alone. Call inside a transaction holding
    `scope_lock_for_transaction`. Returns the ids of the documents rewritten."""
    if not specs:
        return []
    by_key = {(s.collection, s.target_id): s for s in specs}
    existing = _existing(scope=scope, keys=list(by_key), model="")
    changed = [(existing[key][0], s) for key, s in by_key.items() if key in existing and existing[key][1] != s.text]
    if not changed:
        return []
    ids = [doc_id for doc_id, _ in changed]
    _stats(scope=scope, doc_ids=ids, sign=-1)
    _rewrite(changed)
    _stats(scope=scope, doc_ids=ids, sign=+1)
    _postings(doc_ids=ids)
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM retrieval_embedding e USING retrieval_searchdocument d"
            " WHERE d.id = ANY(%s) AND e.target_type = 'doc_' || d.collection AND e.target_id = d.id",
            [ids],
        )
    return ids


def fact_documents_refresh(*, scope: Scope, fact_ids: list[int]) -> int:
    """Rewrite these facts' documents from the rows as they stand, after something the indexer
    does not look for changed their text: an entity merge (or its undo) gives a fact another
    subject, whose name the document adds when the sentence lacks it. Facts not indexed yet are
    left to the indexer, which writes them from the rows anyway. Call outside a transaction (it
    embeds the rewritten documents after its own commit). Returns how many were rewritten."""
    if not fact_ids:
        return 0
    with transaction.atomic():
        scope_lock_for_transaction(scope)
        facts = Fact.objects.in_scope(scope).select_related("subject").filter(pk__in=fact_ids).order_by("id")
        rewritten = documents_rewrite(scope=scope, specs=[fact_spec(f) for f in facts])
    documents_embed(scope=scope, doc_ids=rewritten)
    return len(rewritten)


def documents_embed(*, scope: Scope, doc_ids: list[int], embedder: Embedder | None = None) -> None:
    """Embed these documents where they lack a vector for the scope's model (slow: call it
    outside transactions). Under the scope's lock, like every indexer."""
    if not doc_ids:
        return
    with _scope_lock(scope):
        embedder = embedder or scope_embedder(scope)  # under the lock, as a reindex switches models under it
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT d.id, d.collection, d.target_id, d.text, d.speaker FROM retrieval_searchdocument d WHERE d.scope_id = %s"
                " AND d.id = ANY(%s) AND NOT EXISTS (SELECT 1 FROM retrieval_embedding e"
                " WHERE e.target_type = 'doc_' || d.collection AND e.target_id = d.id AND e.model = %s)",
                [scope.pk, doc_ids, embedder.name],
            )
            rows = cursor.fetchall()
        _embed(scope=scope, docs=[(i, DocSpec(c, t, x, None, sp)) for i, c, t, x, sp in rows], embedder=embedder)


def speakers_refresh(*, scope: Scope) -> None:
    """Re-read the scope's speakers from its documents (after documents were erased, a speaker
    only they named must no longer be recognised)."""
    IndexState.objects.filter(scope=scope).update(speakers=_speakers(scope))


def windows_around(*, scope: Scope, session_id: int, position: int) -> list[DocSpec]:
    """The windows whose members may change when the turn at `position` of a session goes (or
    the gap it left closes): those centred within the widest radius on either side, built from
    the session's turns as they stand, by order rather than by position arithmetic, exactly as
    a fresh build of the session would."""
    radius = max(WINDOW_RADII.values())
    fields = ("id", "position", "speaker", "text", "occurred_at")
    turns = Turn.objects.in_scope(scope).filter(session_id=session_id)
    before = list(turns.filter(position__lt=position).order_by("-position").values_list(*fields)[: 2 * radius])[::-1]
    after = list(turns.filter(position__gte=position).order_by("position").values_list(*fields)[: 2 * radius])
    rows = before + after
    centres = range(max(0, len(before) - radius), min(len(rows), len(before) + radius))
    specs = []
    for index in centres:
        turn_id, _, speaker, _, occurred_at = rows[index]
        for collection, r in WINDOW_RADII.items():
            members = [(row[2], row[3]) for row in rows[max(0, index - r) : index + r + 1]]
            specs.append(DocSpec(collection, turn_id, window_document(centre_at=occurred_at, members=members), occurred_at, speaker))
    return specs


def index_queued(*, scope: Scope) -> int:
    """`index_pending(full=True)` for the task `retrieval.index_scope` on a worker: once it holds
    the scope's lock it clears the scope's "a run is queued" mark (`queue_index`), then sweeps."""
    state, _ = IndexState.objects.get_or_create(scope=scope)
    with _scope_lock(scope):
        index_run_starting(scope)
        # The scope's model, read under the lock (as index_pending does: a reindex switches it under this lock).
        return _background_run(scope=scope, state=state)


# Index hygiene: documents of rows that no longer exist. Forgetting and erasure remove them in
# their own transaction (above); a row deleted any other way (the ORM's cascades from a shell,
# a script, a session deleted) is caught twice: `retrieval/signals.py` hands the deleted rows to
# `deleted_rows_unindex` after the commit, and the index task's full sweep (`orphans_remove`)
# finds whatever is left, raw SQL deletes included.

# Which table a collection's target_id points into.
_TARGET_TABLES = {
    Collection.FACT: "memories_fact", Collection.EPISODE: "memories_episode",
    **{collection: "memories_turn" for collection in TURN_COLLECTIONS},
}
_RAW_TARGETS = {EmbeddingTarget.FACT: "memories_fact", EmbeddingTarget.EPISODE: "memories_episode", EmbeddingTarget.TURN: "memories_turn"}


@dataclass(frozen=True)
class DeletedRow:
    """A fact, episode or turn that was deleted; a turn says where it sat in its session."""

    scope_id: int
    kind: str  # "fact", "episode" or "turn"
    pk: int
    session_id: int | None = None
    position: int | None = None


def _rows_gone(*, head: str, kind_column: str, tables: dict[str, str], scope: Scope, ids: dict[str, list[int]] | None) -> list:
    """Run `head` (a SELECT or DELETE over `retrieval_searchdocument d` or `retrieval_embedding e`)
    once per kind in `tables` (kind → the table its target_id points into), keeping the rows
    whose target is gone; `ids` (kind → target ids) limits it to those, else all the scope's.
    Returns the rows selected, or one rowcount per DELETE."""
    alias = head.split()[-1]
    out: list = []
    with connection.cursor() as cursor:
        for kind, table in tables.items():
            if ids is not None and not ids.get(kind):
                continue
            only = f" AND {alias}.target_id = ANY(%s)" if ids is not None else ""
            cursor.execute(
                f"{head} WHERE {alias}.scope_id = %s AND {alias}.{kind_column} = %s{only}"
                f" AND NOT EXISTS (SELECT 1 FROM {table} t WHERE t.id = {alias}.target_id)",
                [scope.pk, kind] + ([ids[kind]] if ids is not None else []),
            )
            out.extend(cursor.fetchall() if head.startswith("SELECT") else [cursor.rowcount])
    return out


def _orphan_documents(
    *, scope: Scope, targets: dict[str, list[int]] | None = None, tables: dict[str, str] = _TARGET_TABLES,
) -> list[int]:
    """Ids of the scope's documents whose row is gone; `targets` (collection → target ids)
    limits the look-up to those, else every document is checked (index-backed anti-joins);
    `tables`, to those collections (collection → the table its target_id points into)."""
    rows = _rows_gone(head="SELECT d.id FROM retrieval_searchdocument d", kind_column="collection", tables=tables,
                      scope=scope, ids=targets)
    return [row[0] for row in rows]


def _orphan_vectors_delete(*, scope: Scope, raw_ids: dict[str, list[int]] | None = None, between: Callable[[], None] = lambda: None) -> int:
    """Delete the scope's vectors whose document or row is gone: raw-row vectors (facts',
    episodes', turns') of `raw_ids`, or in the sweep (None) of any row, and every document vector
    (`between()` after each kind)."""
    deleted = 0
    for kind, table in _RAW_TARGETS.items():
        deleted += sum(_rows_gone(head="DELETE FROM retrieval_embedding e", kind_column="target_type", tables={kind: table},
                                  scope=scope, ids=raw_ids))
        between()
    if raw_ids is None:
        with connection.cursor() as cursor:
            cursor.execute(
                "DELETE FROM retrieval_embedding e WHERE e.scope_id = %s AND e.target_type = ANY(%s)"
                " AND NOT EXISTS (SELECT 1 FROM retrieval_searchdocument d WHERE d.id = e.target_id)",
                [scope.pk, [vector_target(c) for c in Collection.values]],
            )
            deleted += cursor.rowcount
    return deleted


def deleted_rows_unindex(rows: list[DeletedRow]) -> int:
    """Take deleted facts, episodes and turns out of their scopes' search index, after the
    commit that deleted them: their documents (a turn's own and the windows centred on it) with
    postings and vectors, the term statistics corrected exactly, their raw-row vectors; and when
    a turn's documents were still there (nobody had cleaned up), the neighbours' windows rebuilt
    without its text, their vectors made again. Rows that exist (a rolled-back delete) and
    scopes that are gone are skipped. Returns how many documents went."""
    by_scope: dict[int, list[DeletedRow]] = defaultdict(list)
    for row in rows:
        by_scope[row.scope_id].append(row)
    erased = 0
    for scope in Scope.objects.filter(pk__in=list(by_scope)).order_by("id"):
        erased += _deleted_unindex(scope=scope, rows=by_scope[scope.pk])
    return erased


def _deleted_unindex(*, scope: Scope, rows: list[DeletedRow]) -> int:
    ids = {kind: sorted({row.pk for row in rows if row.kind == kind}) for kind in ("fact", "episode", "turn")}
    targets = {Collection.FACT: ids["fact"], Collection.EPISODE: ids["episode"], **{c: ids["turn"] for c in TURN_COLLECTIONS}}
    with transaction.atomic():
        scope_lock_for_transaction(scope)
        doc_ids = _orphan_documents(scope=scope, targets=targets)
        if doc_ids:
            with connection.cursor() as cursor:
                cursor.execute("SELECT DISTINCT target_id FROM retrieval_searchdocument WHERE id = ANY(%s) AND collection = %s",
                               [doc_ids, Collection.TURN])
                unwindowed = {row[0] for row in cursor.fetchall()}
        else:
            unwindowed = set()
        documents_erase(scope=scope, doc_ids=doc_ids)
        _orphan_vectors_delete(scope=scope, raw_ids={
            EmbeddingTarget.FACT: ids["fact"], EmbeddingTarget.EPISODE: ids["episode"], EmbeddingTarget.TURN: ids["turn"],
        })
        specs: dict[tuple[str, int], DocSpec] = {}
        for row in rows:
            if row.kind == "turn" and row.pk in unwindowed and row.session_id is not None:
                for spec in windows_around(scope=scope, session_id=row.session_id, position=row.position):
                    specs[(spec.collection, spec.target_id)] = spec
        rewritten = documents_rewrite(scope=scope, specs=list(specs.values()))
        if doc_ids:
            speakers_refresh(scope=scope)
    documents_embed(scope=scope, doc_ids=rewritten)
    return len(doc_ids)


def orphans_remove(*, scope: Scope, between: Callable[[], None] = lambda: None) -> dict[str, int]:
    """The sweep's share of hygiene (under the indexer's lock): documents whose row is gone,
    with their postings and vectors; vectors whose document or row is gone; and, when the
    statistics no longer add up to the documents (a document deleted behind the indexer's
    back), the scope's TermStat and CorpusStat rebuilt from its documents. In steps of one
    collection or kind each, each its own transaction; `between()` runs after each step (a
    background run documents the rows committed meanwhile, `_index_locked`)."""
    # The indexer's session lock is held: no transaction lock (it would last a test's transaction).
    documents = vectors = 0
    for collection, table in _TARGET_TABLES.items():
        with transaction.atomic():
            erased = documents_erase(scope=scope, doc_ids=_orphan_documents(scope=scope, tables={collection: table}))
        documents, vectors = documents + erased["documents"], vectors + erased["vectors"]
        between()
    vectors += _orphan_vectors_delete(scope=scope, between=between)
    with transaction.atomic():
        rebuilt = _stats_check(scope=scope)
        if documents:
            speakers_refresh(scope=scope)
    return {"documents": documents, "vectors": vectors, "statistics_rebuilt": int(rebuilt)}


def _stats_check(*, scope: Scope) -> bool:
    """Rebuild the scope's term statistics from its documents if the collection counts and
    lengths disagree with them; returns whether it did."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT collection, count(*), coalesce(sum(length), 0) FROM retrieval_searchdocument WHERE scope_id = %s GROUP BY collection",
            [scope.pk],
        )
        actual = {c: (n, total) for c, n, total in cursor.fetchall()}
        cursor.execute("SELECT collection, doc_count, total_length FROM retrieval_corpusstat WHERE scope_id = %s", [scope.pk])
        counted = {c: (n, total) for c, n, total in cursor.fetchall()}
        if actual == counted:
            return False
        logger.warning("Search statistics of scope %s did not match its documents; rebuilt", scope.pk)
        cursor.execute("DELETE FROM retrieval_termstat WHERE scope_id = %s", [scope.pk])
        cursor.execute("DELETE FROM retrieval_corpusstat WHERE scope_id = %s", [scope.pk])
        cursor.execute("SELECT id FROM retrieval_searchdocument WHERE scope_id = %s", [scope.pk])
        doc_ids = [row[0] for row in cursor.fetchall()]
    if doc_ids:
        _stats(scope=scope, doc_ids=doc_ids, sign=+1)
    return True
