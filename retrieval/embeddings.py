"""Storing vectors (of search documents and entities) and the partial HNSW index per model."""

import re
from collections.abc import Sequence

from django.db import connection, transaction

from memoryweb.providers.embedders import Embedder, get_embedder
from memories.models import Scope
from retrieval.models import Embedding

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
