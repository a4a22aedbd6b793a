"""Vectors beside their rows: embedding in batches, storing, and the per-model HNSW index.

The embedder is the slow part, so callers embed everything an operation needs in one batch
(outside any transaction) and then store the vectors. Entity resolution (memories) and the
search index (retrieval) both keep their vectors in `Embedding` through this module."""

import re
from collections.abc import Iterable, Sequence

from django.db import connection, transaction

from memoryweb.providers.embedders import Embedder, get_embedder
from memories.models import Embedding, Scope

# Per-model HNSW indexes this process knows to exist, so the catalogue is read once per model.
_created_indexes: set[str] = set()


def index_name(model: str) -> str:
    return "retrieval_emb_hnsw_" + re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")[:40]


def ensure_model_index(embedder: Embedder) -> None:
    """Create the partial HNSW index for this model the first time it is used (idempotent)."""
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
            f"USING hnsw ((vec::vector({int(embedder.dim)})) vector_cosine_ops) WHERE model = %s",
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
    rows = [
        Embedding(scope=scope, target_type=target_type, target_id=target_id, model=embedder.name, vec=vec)
        for (target_id, _), vec in zip(items, vectors)
    ]
    with transaction.atomic():
        Embedding.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["target_type", "target_id", "model"], update_fields=["vec", "scope"]
        )
    return len(rows)


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
