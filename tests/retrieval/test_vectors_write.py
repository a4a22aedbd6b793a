"""Vector writes (memories/services/vectors.py: vectors_write) and vectors left out of the HNSW
graph while a scope is searched exactly (retrieval/indexing.py: vectors_deferrable)."""

from datetime import UTC, datetime

import pytest
from django.db import connection, transaction

from memoryweb.providers.embedders import get_embedder
from memories.models import Embedding
from memories.services.ingest import ingest_session
from memories.services.vectors import vectors_write
from retrieval.indexing import index_pending
from retrieval.models import Collection
from retrieval.vector import vector_candidates, vector_search_exact

pytestmark = pytest.mark.django_db


def stored(scope, model):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT target_type, target_id, scope_id, vec::text, deferred FROM retrieval_embedding WHERE model = %s ORDER BY target_id",
            [model],
        )
        return cursor.fetchall()


def test_the_copy_path_writes_the_rows_the_orm_wrote(cast):
    """The same rows, vector for vector, as Django's bulk upsert (the path before COPY); a
    second write updates in place; a target twice in one write keeps its last vector."""
    embedder = get_embedder()
    texts = ["I adopted a ferret", "We sailed to Crete", "The bakery sells rye bread", "ünïcode ✓ text"]
    vectors = embedder.embed(texts)
    vectors.append([0.1, -0.25, 1e-8, 3.4028234e38] + [0.0] * (embedder.dim - 4))  # tiny, huge and negative floats
    rows = list(enumerate(vectors, start=1))
    Embedding.objects.bulk_create(
        [Embedding(scope=cast.scope_a, target_type="doc_turn", target_id=i, model="plain", vec=v) for i, v in rows],
        update_conflicts=True, unique_fields=["target_type", "target_id", "model", "scope"], update_fields=["vec"],
    )
    with transaction.atomic():
        assert vectors_write(scope=cast.scope_a, target_type="doc_turn", model="copied", rows=rows) == len(rows)
    plain, copied = stored(cast.scope_a, "plain"), stored(cast.scope_a, "copied")
    assert copied == plain and len(copied) == len(rows)
    assert not any(row[4] for row in copied)

    # An upsert rewrites the vector in place; duplicates in one write: the last wins.
    with transaction.atomic():
        vectors_write(scope=cast.scope_a, target_type="doc_turn", model="copied", rows=[(1, vectors[2]), (2, vectors[0]), (1, vectors[3])])
        vectors_write(scope=cast.scope_a, target_type="doc_turn", model="copied", rows=[(3, vectors[1])], deferred=True)
    after = {row[1]: row for row in stored(cast.scope_a, "copied")}
    assert after[1][2:4] == (cast.scope_a.pk, plain[3][3]) and after[2][2:4] == (cast.scope_a.pk, plain[0][3])
    assert after[3][3:] == (plain[1][3], True) and len(after) == len(rows)
    # The scope is part of the key (docs/ARCHITECTURE.md, "Past one database"): a vector is never moved to another scope.
    with transaction.atomic():
        vectors_write(scope=cast.scope_b, target_type="doc_turn", model="copied", rows=[(1, vectors[0])])
    assert sorted((row[1], row[2]) for row in stored(cast.scope_a, "copied") if row[1] == 1) == [
        (1, cast.scope_a.pk), (1, cast.scope_b.pk)]


def messages(n):
    return [
        {"id": f"t{i}", "speaker": "Caroline" if i % 2 else "Melanie", "text": f"message {i} about topic{i} and pottery",
         "occurred_at": datetime(2024, 5, 1, 12, i, tzinfo=UTC).isoformat()}
        for i in range(n)
    ]


def deferred_count(scope):
    return Embedding.objects.filter(scope=scope, deferred=True).count()


def test_a_small_scope_keeps_its_vectors_out_of_the_graph_until_it_outgrows_exact_search(cast, settings):
    settings.RETRIEVAL_EXACT_BELOW = 100
    scope, embedder = cast.scope_a, get_embedder()
    ingest_session(scope=scope, session_id="s1", messages=messages(10), actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope)
    total = Embedding.objects.filter(scope=scope, model=embedder.name).count()
    assert total == 30 and deferred_count(scope) == 30  # each turn and its two windows
    assert vector_search_exact(scope=scope, embedder=embedder)
    query = embedder.embed(["message 3 about topic3"])[0]
    exact = vector_candidates(scope=scope, query_vector=query, embedder=embedder, collections=[Collection.TURN], limit=5)
    assert exact[Collection.TURN][0].target_id and len(exact[Collection.TURN]) == 5

    # Deferred vectors force exact search even where the threshold says otherwise (another
    # process's setting): the graph does not hold them.
    settings.RETRIEVAL_EXACT_BELOW = 0
    assert vector_search_exact(scope=scope, embedder=embedder)

    # The next write that would pass the threshold puts every vector in the graph.
    settings.RETRIEVAL_EXACT_BELOW = 40
    ingest_session(scope=scope, session_id="s2", messages=messages(5), actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope)
    assert Embedding.objects.filter(scope=scope, model=embedder.name).count() == 45
    assert deferred_count(scope) == 0
    assert not vector_search_exact(scope=scope, embedder=embedder)
    approximate = vector_candidates(scope=scope, query_vector=query, embedder=embedder, collections=[Collection.TURN], limit=5,
                                    exact=False)
    exact_now = vector_candidates(scope=scope, query_vector=query, embedder=embedder, collections=[Collection.TURN], limit=5,
                                  exact=True)
    # The graph holds every vector: it finds what exact search finds (ties may come in either order).
    assert [round(h.similarity, 5) for h in approximate[Collection.TURN]] == [round(h.similarity, 5) for h in exact_now[Collection.TURN]]


def test_the_sweep_adds_deferred_vectors_once_other_writes_grew_the_scope(cast, settings):
    settings.RETRIEVAL_EXACT_BELOW = 35
    scope, embedder = cast.scope_a, get_embedder()
    ingest_session(scope=scope, session_id="s1", messages=messages(10), actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope)
    assert deferred_count(scope) == 30
    # Entity vectors (another writer) take the scope past the threshold: still searched exactly.
    with transaction.atomic():
        vectors_write(scope=scope, target_type="entity", model=embedder.name, rows=[(i, embedder.embed([f"e{i}"])[0]) for i in range(10)])
    assert vector_search_exact(scope=scope, embedder=embedder)
    index_pending(scope=scope, full=True)
    assert deferred_count(scope) == 0 and not vector_search_exact(scope=scope, embedder=embedder)


def test_no_threshold_defers_nothing(cast, settings):
    settings.RETRIEVAL_EXACT_BELOW = 0
    scope = cast.scope_a
    ingest_session(scope=scope, session_id="s1", messages=messages(4), actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope)
    assert Embedding.objects.filter(scope=scope).count() == 12 and deferred_count(scope) == 0
