"""A large scope's vectors: written outside every graph by a bulk index run, then put in HNSW
graphs of the scope's own built once (one partial index per target type), which recall searches
without a scope filter. The index a bulk run makes is the one the incremental indexer makes, an
interrupted bulk run resumes, and what is written afterwards goes into the scope's graphs."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from accounts.permissions import Principal
from memoryweb.providers.embedders import embedder_build, get_embedder
from memories.models import Embedding, Scope
from memories.services.bulk_ingest import ingest_sessions_bulk
from memories.services.ingest import ingest_session
from memories.services.vectors import scope_graph_name, scope_graphs, scope_graphs_drop
from retrieval import indexing
from retrieval.indexing import index_pending
from retrieval.models import Collection, SearchDocument
from retrieval.vector import vector_candidates, vector_search_exact
from tests.memories.test_bulk_ingest import Interrupted, StopsAfter, corpus_lines, index_snapshot

GRAPHS = {"doc_turn", "doc_turn_w1", "doc_turn_w2"}


def graph_options(scope, model) -> dict[str, list[str]]:
    """Each of the scope's graphs' HNSW parameters as the catalogue holds them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reloptions FROM pg_class WHERE relname = ANY(%s)",
            [[scope_graph_name(scope_id=scope.pk, target_type=t, model=model) for t in GRAPHS]],
        )
        options = dict(cursor.fetchall())
    return {t: options[scope_graph_name(scope_id=scope.pk, target_type=t, model=model)] for t in GRAPHS
            if scope_graph_name(scope_id=scope.pk, target_type=t, model=model) in options}


def test_the_graphs_are_built_with_the_configured_hnsw_parameters(cast, settings, large):
    settings.RETRIEVAL_GRAPH_M, settings.RETRIEVAL_GRAPH_EF_CONSTRUCTION = 8, 10  # ef_construction raised to twice m
    settings.RETRIEVAL_SCOPE_GRAPH_AT = 300  # 120 turns make 360 document vectors
    ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(120), actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=cast.scope_a, full=True, embedder=get_embedder())
    assert graph_options(cast.scope_a, get_embedder().name) == {t: ["m=8", "ef_construction=16"] for t in GRAPHS}


def vectors(scope, model):
    """Each document's vector by (collection, text), rounded: comparable across scopes."""
    rows = Embedding.objects.filter(scope=scope, model=model, target_type__startswith="doc_")
    docs = dict(SearchDocument.objects.filter(scope=scope).values_list("id", "text"))
    return sorted((row.target_type, docs[row.target_id], tuple(round(float(v), 5) for v in row.vec)) for row in rows)


@pytest.fixture
def large(settings):
    settings.RETRIEVAL_EXACT_BELOW = 100
    settings.RETRIEVAL_SCOPE_GRAPH_AT = 600  # 400 turns make 1,200 document vectors


def test_a_bulk_run_builds_the_incremental_index_and_graphs_of_the_scope_s_own(cast, settings, large):
    lines, embedder = corpus_lines(400), get_embedder()
    ingest_sessions_bulk(scope=cast.scope_a, sessions=lines, actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=cast.scope_a, full=True, embedder=embedder)
    settings.RETRIEVAL_SCOPE_GRAPH_AT = 0  # the incremental indexer, into the shared graph
    ingest_sessions_bulk(scope=cast.scope_b, sessions=lines, actor=Principal(user=cast.outsider), enqueue=False)
    index_pending(scope=cast.scope_b, full=True, embedder=embedder)

    assert index_snapshot(cast.scope_a) == index_snapshot(cast.scope_b)
    assert vectors(cast.scope_a, embedder.name) == vectors(cast.scope_b, embedder.name)
    assert scope_graphs(scope_id=cast.scope_a.pk, model=embedder.name) == GRAPHS
    assert scope_graphs(scope_id=cast.scope_b.pk, model=embedder.name) == set()
    assert graph_options(cast.scope_a, embedder.name) == {t: ["m=16", "ef_construction=128"] for t in GRAPHS}
    # Outside the shared graph, inside the scope's own; searched through them, not exactly.
    assert not Embedding.objects.filter(scope=cast.scope_a, target_type__startswith="doc_", deferred=False).exists()
    assert not vector_search_exact(scope=cast.scope_a, embedder=embedder)
    query = embedder.embed(["the kayak with Olga in Lisbon"])[0]
    # (At this size the planner sorts the 400 rows rather than walk the graph; `bench recall` prints the plan at scale.)
    for collection in (Collection.TURN, Collection.TURN_W1, Collection.TURN_W2):
        graph = vector_candidates(scope=cast.scope_a, query_vector=query, embedder=embedder, collections=[collection], limit=20, exact=False)
        exact = vector_candidates(scope=cast.scope_a, query_vector=query, embedder=embedder, collections=[collection], limit=20, exact=True)
        # ef_search is at least the pool: on 400 rows the graph finds what the exact scan finds.
        assert len(graph[collection]) == 20
        assert [round(h.similarity, 5) for h in graph[collection]] == [round(h.similarity, 5) for h in exact[collection]]


def test_what_is_written_after_the_build_goes_into_the_scope_s_graphs(cast, large):
    scope, embedder = cast.scope_a, get_embedder()
    ingest_sessions_bulk(scope=scope, sessions=corpus_lines(400), actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=scope, full=True, embedder=embedder)
    messages = [{"id": "x1", "speaker": "Zelda", "text": "the zeppelin hangar reopened on Tuesday"}]
    ingest_session(scope=scope, session_id="late", messages=messages, actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope, embedder=embedder)  # incremental, as recall's catch-up runs it
    document = SearchDocument.objects.get(scope=scope, collection=Collection.TURN, text__contains="zeppelin")
    vector = Embedding.objects.get(scope=scope, target_type="doc_turn", target_id=document.pk)
    assert vector.deferred  # not in the shared graph
    query = [float(v) for v in vector.vec]
    found = vector_candidates(scope=scope, query_vector=query, embedder=embedder, collections=[Collection.TURN], limit=5, exact=False)
    assert found[Collection.TURN][0].target_id == document.target_id and found[Collection.TURN][0].similarity > 0.999


@pytest.mark.django_db(transaction=True)  # each batch commits and the graphs are built CONCURRENTLY, as in a real build
def test_an_interrupted_bulk_run_searches_exactly_then_resumes_and_builds_the_graphs(cast, settings, large, monkeypatch):
    monkeypatch.setattr(indexing, "_BATCH", 40)
    lines, embedder = corpus_lines(400), get_embedder()
    ingest_sessions_bulk(scope=cast.scope_a, sessions=lines, actor=Principal(user=cast.owner), enqueue=False)
    ingest_sessions_bulk(scope=cast.scope_b, sessions=lines, actor=Principal(user=cast.outsider), enqueue=False)
    try:
        index_pending(scope=cast.scope_b, full=True, embedder=embedder)  # the uninterrupted build
        with pytest.raises(Interrupted):
            index_pending(scope=cast.scope_a, full=True, embedder=StopsAfter(embedder, calls=8))
        # Halfway: more vectors than exact search's threshold, none in any graph, so searched exactly.
        assert Embedding.objects.filter(scope=cast.scope_a, deferred=True).count() > 100
        assert not Embedding.objects.filter(scope=cast.scope_a, deferred=False).exists()
        assert scope_graphs(scope_id=cast.scope_a.pk, model=embedder.name) == set()
        assert vector_search_exact(scope=cast.scope_a, embedder=embedder)
        index_pending(scope=cast.scope_a, full=True, embedder=embedder)  # resumed
        assert index_snapshot(cast.scope_a) == index_snapshot(cast.scope_b)
        assert vectors(cast.scope_a, embedder.name) == vectors(cast.scope_b, embedder.name)
        assert scope_graphs(scope_id=cast.scope_a.pk, model=embedder.name) == GRAPHS
        assert not vector_search_exact(scope=cast.scope_a, embedder=embedder)
    finally:
        for scope in (cast.scope_a, cast.scope_b):
            scope_graphs_drop(scope_id=scope.pk)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE indexname LIKE %s", [f"retr\\_hnsw\\_s{cast.scope_a.pk}\\_%"])
        assert cursor.fetchone()[0] == 0


def test_memoryweb_index_builds_what_is_missing_then_nothing(cast, capsys, large):
    ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(400), actor=Principal(user=cast.owner), enqueue=False)
    call_command("index", "--scope", "alpha", "--json", "--as", "owner")
    assert json.loads(capsys.readouterr().out)["documents"] == 3 * 400
    assert scope_graphs(scope_id=cast.scope_a.pk, model=get_embedder().name) == GRAPHS
    call_command("index", "--scope", "alpha", "--json", "--as", "owner")  # resumed: nothing left
    assert json.loads(capsys.readouterr().out)["documents"] == 0


def test_memoryweb_index_refuses_a_scope_the_user_cannot_write(cast):
    with pytest.raises(CommandError, match="bravo"):
        call_command("index", "--scope", "bravo", "--as", "owner")  # another team's scope: not found
    with pytest.raises(CommandError):
        call_command("index", "--scope", "alpha", "--as", "viewer")  # read-only: forbidden


def test_a_deleted_benchmark_scope_takes_its_graphs_with_it(cast, large):
    from retrieval.bench_ingest import scope_delete_throwaway

    ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(400), actor=Principal(user=cast.owner), enqueue=False)
    embedder = get_embedder()
    index_pending(scope=cast.scope_a, full=True, embedder=embedder)
    assert scope_graphs(scope_id=cast.scope_a.pk, model=embedder.name) == GRAPHS
    scope_id = cast.scope_a.pk
    scope_delete_throwaway(scope=cast.scope_a)
    assert scope_graphs(scope_id=scope_id, model=embedder.name) == set()


def test_a_scope_deleted_in_the_orm_takes_its_graphs_with_it_after_the_commit(cast, large, django_capture_on_commit_callbacks):
    ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(400), actor=Principal(user=cast.owner), enqueue=False)
    embedder = get_embedder()
    index_pending(scope=cast.scope_a, full=True, embedder=embedder)
    scope_id = cast.scope_a.pk
    assert scope_graphs(scope_id=scope_id, model=embedder.name) == GRAPHS
    with django_capture_on_commit_callbacks(execute=True):
        Scope.objects.filter(pk=scope_id).delete()  # what the Django admin's delete does
        assert scope_graphs(scope_id=scope_id, model=embedder.name) == GRAPHS  # not before the commit
    assert scope_graphs(scope_id=scope_id, model=embedder.name) == set()


def test_dropping_the_old_model_s_vectors_drops_its_graphs_and_keeps_the_new_model_s(cast, large, django_capture_on_commit_callbacks):
    from retrieval.reindex import scope_reindex, vectors_drop_old

    ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(400), actor=Principal(user=cast.owner), enqueue=False)
    old = get_embedder()
    index_pending(scope=cast.scope_a, full=True, embedder=old)
    owner = Principal(user=cast.owner)
    scope_reindex(principal=owner, scope=cast.scope_a, model="local")  # builds the new model's graphs
    new = embedder_build("local")
    assert scope_graphs(scope_id=cast.scope_a.pk, model=new.name) == GRAPHS
    with django_capture_on_commit_callbacks(execute=True):
        vectors_drop_old(principal=owner, scope=cast.scope_a, model="local")
    assert scope_graphs(scope_id=cast.scope_a.pk, model=old.name) == set()
    assert scope_graphs(scope_id=cast.scope_a.pk, model=new.name) == GRAPHS
    scope_graphs_drop(scope_id=cast.scope_a.pk)


@pytest.mark.django_db(transaction=True)  # committed batches and a CONCURRENTLY build, as in a real reindex
def test_a_large_scope_reindexed_gets_graphs_of_its_own_for_the_new_model_even_after_an_interruption(cast, large):
    from retrieval.reindex import scope_reindex

    scope, old = cast.scope_a, get_embedder()
    ingest_sessions_bulk(scope=scope, sessions=corpus_lines(400), actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=scope, full=True, embedder=old)
    owner, new = Principal(user=cast.owner), embedder_build("local")

    def stop_after_two_batches(done, total):
        if done >= 200:
            raise Interrupted

    try:
        with pytest.raises(Interrupted):
            scope_reindex(principal=owner, scope=scope, model="local", batch_size=100, progress=stop_after_two_batches)
        # Halfway: outside every graph (the shared one would take them one insert at a time), not switched.
        assert 200 <= Embedding.objects.filter(scope=scope, model=new.name, deferred=True).count() < 3 * 400
        assert not Embedding.objects.filter(scope=scope, model=new.name, deferred=False).exists()
        assert scope_graphs(scope_id=scope.pk, model=new.name) == set()
        report = scope_reindex(principal=owner, scope=scope, model="local")  # resumed
        assert report.switched and Embedding.objects.filter(scope=scope, model=new.name).count() == 3 * 400
        assert scope_graphs(scope_id=scope.pk, model=new.name) == GRAPHS
        assert not Embedding.objects.filter(scope=scope, model=new.name, target_type__startswith="doc_", deferred=False).exists()
        assert not vector_search_exact(scope=scope, embedder=new)
        query = new.embed(["the kayak with Olga in Lisbon"])[0]
        for collection in (Collection.TURN, Collection.TURN_W1, Collection.TURN_W2):
            graph = vector_candidates(scope=scope, query_vector=query, embedder=new, collections=[collection], limit=10, exact=False)
            exact = vector_candidates(scope=scope, query_vector=query, embedder=new, collections=[collection], limit=10, exact=True)
            assert [round(h.similarity, 5) for h in graph[collection]] == [round(h.similarity, 5) for h in exact[collection]]
    finally:
        scope_graphs_drop(scope_id=scope.pk)
