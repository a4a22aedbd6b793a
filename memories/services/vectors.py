"""Vectors beside their rows: embedding in batches, storing, and the per-model HNSW index.

The embedder is the slow part, so callers embed everything an operation needs in one batch
(outside any transaction) and then store the vectors. Entity resolution (memories) and the
search index (retrieval) both keep their vectors in `Embedding` through this module."""

import re
import struct
from collections.abc import Iterable, Sequence

import numpy as np
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
