"""Vectors beside their rows: embedding in batches, storing, and the per-model HNSW index.

The embedder is the slow part, so callers embed everything an operation needs in one batch
(outside any transaction) and then store the vectors. Entity resolution (memories) and the
search index (retrieval) both keep their vectors in `Embedding` through this module."""

import hashlib
import re
import struct
from collections.abc import Iterable, Sequence

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from memoryweb.providers.embedders import Embedder, get_embedder
from memories.models import Scope

# Per-model HNSW indexes this process knows to exist, so the catalogue is read once per model.
_created_indexes: set[str] = set()


def index_name(model: str) -> str:
    return "retrieval_emb_hnsw_" + re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")[:40]


def ensure_model_index(embedder: Embedder) -> None:
    """Create the partial HNSW index for this model the first time it is used (idempotent).
    Deferred vectors (`Embedding.deferred`: a small scope's, searched exactly) are left out."""
    name = index_name(embedder.name)
    if name in _created_indexes:
        return
    with connection.cursor() as cursor:
        # Look before creating: DDL is refused inside a transaction with pending deferred triggers.
        cursor.execute("SELECT 1 FROM pg_indexes WHERE tablename = 'retrieval_embedding' AND indexname = %s", [name])
        if cursor.fetchone():
            _created_indexes.add(name)
            return
        cursor.execute(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON retrieval_embedding '
            f"USING hnsw ((vec::vector({int(embedder.dim)})) vector_cosine_ops) WHERE model = %s AND NOT deferred",
            [embedder.name],
        )
    _created_indexes.add(name)


def drop_model_index(embedder: Embedder) -> None:
    """Drop the model's HNSW index (a bulk load builds it once afterwards, far faster than row by row)."""
    name = index_name(embedder.name)
    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
    _created_indexes.discard(name)


# A scope holding at least RETRIEVAL_SCOPE_GRAPH_AT vectors of a model gets HNSW graphs of its own,
# one per search-index target type (`scope_graphs_build`): built once with CREATE INDEX after a
# bulk load instead of row by row into the shared graph (measured: about 1.2 ms a row there, 79
# documents/s at 46,000 turns), and searched without a scope filter. Few scopes are that large,
# so the table keeps few partial indexes (the planner weighs every one for each vector query).
# The search index's vectors (retrieval/indexing.py: vector_target), which per-scope graphs hold.
DOC_TARGET_TYPES = ("doc_fact", "doc_episode", "doc_turn", "doc_turn_w1", "doc_turn_w2")


def scope_graph_name(*, scope_id: int, target_type: str, model: str) -> str:
    """The per-scope graph's index name (at most 63 bytes: the model by a digest of its name)."""
    return f"retr_hnsw_s{scope_id}_{target_type}_{hashlib.md5(model.encode()).hexdigest()[:8]}"


def scope_graphs(*, scope_id: int, model: str) -> set[str]:
    """The target types for which the scope has a valid graph of its own for `model` (one query on
    the catalogue: an index a failed CREATE INDEX CONCURRENTLY left invalid does not count)."""
    names = [scope_graph_name(scope_id=scope_id, target_type=t, model=model) for t in DOC_TARGET_TYPES]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT x.t FROM unnest(%s::text[], %s::text[]) AS x(t, name) JOIN pg_index i ON i.indexrelid = to_regclass(x.name)"
            " WHERE i.indisvalid",
            [list(DOC_TARGET_TYPES), names],
        )
        return {row[0] for row in cursor.fetchall()}


def scope_graph_predicate(*, scope_id: int, target_type: str, model: str) -> tuple[str, list]:
    """The per-scope graph's predicate, which a query repeats (with the same literals) to use it."""
    return "e.model = %s AND e.scope_id = %s AND e.target_type = %s", [model, scope_id, target_type]


def scope_graphs_build(*, scope: Scope, embedder: Embedder) -> list[str]:
    """Build the scope's missing graphs (one CREATE INDEX per search-index target type it holds
    vectors of), after a bulk load wrote them outside any graph (`Embedding.deferred`). Outside a
    transaction CONCURRENTLY, so other scopes' writers go on while it builds; an invalid leftover
    of an interrupted build is dropped and built again. Returns the target types built."""
    model, dim = embedder.name, int(embedder.dim)
    # pgvector wants ef_construction at least twice m.
    graph_m = int(settings.RETRIEVAL_GRAPH_M)
    graph_ef = max(int(settings.RETRIEVAL_GRAPH_EF_CONSTRUCTION), 2 * graph_m)
    have = scope_graphs(scope_id=scope.pk, model=model)
    built = []
    concurrently = "" if connection.in_atomic_block else " CONCURRENTLY"
    with connection.cursor() as cursor:
        if not concurrently:
            # Inside a transaction (tests): DDL is refused while deferred foreign-key checks are pending.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE; SET CONSTRAINTS ALL DEFERRED")
        for target_type in DOC_TARGET_TYPES:
            if target_type in have:
                continue
            cursor.execute(
                "SELECT EXISTS (SELECT 1 FROM retrieval_embedding WHERE scope_id = %s AND model = %s AND target_type = %s)",
                [scope.pk, model, target_type],
            )
            if not cursor.fetchone()[0]:
                continue
            name = scope_graph_name(scope_id=scope.pk, target_type=target_type, model=model)
            cursor.execute(f'DROP INDEX{concurrently} IF EXISTS "{name}"')  # an invalid leftover
            # The graph is built in memory when it fits (pgvector: "hnsw graph no longer fits into
            # maintenance_work_mem" otherwise, and the build slows down many times).
            cursor.execute(f"SET maintenance_work_mem = '{int(settings.RETRIEVAL_GRAPH_BUILD_MB)}MB'")
            try:
                cursor.execute(
                    f'CREATE INDEX{concurrently} "{name}" ON retrieval_embedding USING hnsw ((vec::vector({dim})) vector_cosine_ops)'
                    f" WITH (m = {graph_m}, ef_construction = {graph_ef})"
                    " WHERE model = %s AND scope_id = %s AND target_type = %s",
                    [model, scope.pk, target_type],
                )
            finally:
                cursor.execute("RESET maintenance_work_mem")
            built.append(target_type)
    return built


def scope_graphs_drop(*, scope_id: int, keep_model: str = "") -> None:
    """Drop a scope's graphs: every model's (its rows are gone or going), or every model's but
    `keep_model` (the old models' vectors are dropped). Outside a transaction CONCURRENTLY, so the
    drop does not hold every scope's vector reads and writes behind its table lock; callers inside
    one drop after the commit (`scope_graphs_drop_on_commit`)."""
    keep = {scope_graph_name(scope_id=scope_id, target_type=t, model=keep_model) for t in DOC_TARGET_TYPES} if keep_model else set()
    concurrently = "" if connection.in_atomic_block else " CONCURRENTLY"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'retrieval_embedding' AND indexname LIKE %s",
            [f"retr\\_hnsw\\_s{int(scope_id)}\\_%"],
        )
        for (name,) in cursor.fetchall():
            if name not in keep:
                cursor.execute(f'DROP INDEX{concurrently} IF EXISTS "{name}"')


def scope_graphs_drop_on_commit(*, scope_id: int, keep_model: str = "") -> None:
    """`scope_graphs_drop` once the current transaction commits (nothing if it rolls back)."""
    transaction.on_commit(lambda: scope_graphs_drop(scope_id=scope_id, keep_model=keep_model))


def embed_and_store(*, scope: Scope, target_type: str, items: Sequence[tuple[int, str]], embedder: Embedder | None = None) -> int:
    """Embed `(target_id, text)` pairs in batches and upsert their vectors for the active model.

    Call outside a long transaction: the model runs first, then one short write."""
    if not items:
        return 0
    embedder = embedder or get_embedder()
    vectors = embedder.embed([text for _, text in items])
    ensure_model_index(embedder)
    with transaction.atomic():
        return vectors_write(scope=scope, target_type=target_type, model=embedder.name,
                             rows=[(target_id, vec) for (target_id, _), vec in zip(items, vectors)])


def vectors_write(
    *, scope: Scope, target_type: str, model: str, rows: Sequence[tuple[int, Sequence[float]]], deferred: bool = False,
) -> int:
    """Upsert `(target_id, vector)` rows of one target type and model: one binary COPY into a
    staging table and one INSERT … ON CONFLICT from it. Building the rows as Django objects and
    vectors as decimal text took longer than the database's own work (a 1,000-turn index run:
    about a second of 3,000 vectors). The last row wins where a target appears twice. `deferred`:
    keep them out of the model's HNSW graph (`Embedding.deferred`). Call inside a transaction
    (the staging table's rows go with it)."""
    if not rows:
        return 0
    latest = dict(rows)
    ids = list(latest)
    matrix = np.asarray([latest[i] for i in ids], dtype=">f4")
    if matrix.ndim != 2:
        raise ValueError("vectors of one write must have one dimension")
    with connection.cursor() as cursor:
        cursor.execute(_STAGING_TABLE)
        with cursor.cursor.copy("COPY _mw_vector_rows (target_id, vec) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.write(_copy_binary(ids, matrix))
        # The staging rows are deleted as they are read, so a second write in one transaction starts empty.
        cursor.execute(
            "WITH staged AS (DELETE FROM _mw_vector_rows RETURNING target_id, vec)"
            " INSERT INTO retrieval_embedding (scope_id, target_type, target_id, model, vec, deferred, created_at)"
            " SELECT %s, %s, target_id, %s, vec, %s, now() FROM staged"
            " ON CONFLICT (target_type, target_id, model, scope_id) DO UPDATE"
            " SET vec = EXCLUDED.vec, deferred = EXCLUDED.deferred",
            [scope.pk, target_type, model, deferred],
        )
    return len(ids)


# How many vectors of a model a scope holds, counted on the scope index up to a cap (params: the
# scope's id, the model, the cap): whether a scope is small enough to be searched exactly, asked
# by recall (retrieval/vector.py) and by the indexer deciding to defer graph entries.
SCOPE_VECTORS_UP_TO = "(SELECT count(*) FROM (SELECT 1 FROM retrieval_embedding WHERE scope_id = %s AND model = %s LIMIT %s) n)"


# Per connection: rows staged by `vectors_write`, emptied by the INSERT that reads them.
_STAGING_TABLE = "CREATE TEMP TABLE IF NOT EXISTS _mw_vector_rows (target_id bigint, vec vector) ON COMMIT DELETE ROWS"


def _copy_binary(ids: list[int], matrix: np.ndarray) -> bytes:
    """PostgreSQL's binary COPY stream for rows (bigint, vector): per field a length, then the
    value in network byte order; a vector is its dimension, a reserved zero, then float4s."""
    count, dim = matrix.shape
    prefix = struct.Struct(">hiqiHH")
    parts = [b"PGCOPY\n\xff\r\n\x00", struct.pack(">ii", 0, 0)]
    for target_id, row in zip(ids, matrix):
        parts.append(prefix.pack(2, 8, target_id, 4 + 4 * dim, dim, 0))
        parts.append(row.tobytes())
    parts.append(struct.pack(">h", -1))
    return b"".join(parts)


class Vectors:
    """Vectors of a batch of texts, computed by one embedder call."""

    def __init__(self, texts: Iterable[str], embedder: Embedder | None = None):
        self.embedder = embedder or get_embedder()
        distinct = list(dict.fromkeys(t for t in texts if t))
        self._by_text = dict(zip(distinct, self.embedder.embed(distinct))) if distinct else {}
        # The same name and dimension as the real embedder, so rows are keyed by its model.
        self.name = self.embedder.name
        self.dim = self.embedder.dim

    def get(self, text: str) -> list[float] | None:
        return self._by_text.get(text)

    def embed(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._by_text]
        if missing:
            self._by_text.update(zip(missing, self.embedder.embed(missing)))
        return [self._by_text[t] for t in texts]

    def store(self, *, scope: Scope, target_type: str, items: Sequence[tuple[int, str]]) -> int:
        return embed_and_store(scope=scope, target_type=target_type, items=items, embedder=self)
