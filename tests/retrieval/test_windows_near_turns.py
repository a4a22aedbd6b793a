"""A large scope's window lists (±1, ±2) take, beside their graphs' nearest, the windows that hold
one of the turns nearest the question, scored exactly (RETRIEVAL_WINDOWS_NEAR_TURNS): overlapping
windows are near-duplicates that a graph searches poorly, and a window near the question mostly
holds a turn near it. A small scope, searched exactly, is not changed."""

import pytest

from accounts.permissions import Principal
from memoryweb.providers.embedders import get_embedder
from memories.models import Turn
from memories.services.bulk_ingest import ingest_sessions_bulk
from retrieval import vector as vector_module
from retrieval.indexing import index_pending
from retrieval.models import Collection, SearchDocument
from retrieval.search import candidates as candidates_module
from retrieval.search.candidates import QueryVectors, candidates_memo
from retrieval.search.pipeline import recall_evidence
from retrieval.search.question import dense_text, kinds_asked, scope_speakers
from retrieval.vector import VectorHit, hits_union, vector_candidates, vector_search_exact, windows_near_turns
from tests.memories.test_bulk_ingest import corpus_lines

WINDOWS = {Collection.TURN_W1: 1, Collection.TURN_W2: 2}
QUESTION = "When did Maria repair the kayak with Olga Petrova?"


@pytest.fixture
def large(settings, cast):
    """cast.scope_a holding 400 turns in graphs of its own (1,200 document vectors)."""
    settings.RETRIEVAL_EXACT_BELOW = 100
    settings.RETRIEVAL_SCOPE_GRAPH_AT = 600
    ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(400), actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=cast.scope_a, full=True, embedder=get_embedder())
    assert not vector_search_exact(scope=cast.scope_a, embedder=get_embedder())
    return cast.scope_a


def exact_list(scope, vector, collection) -> list[VectorHit]:
    everything = SearchDocument.objects.filter(scope=scope, collection=collection).count()
    return vector_candidates(scope=scope, query_vector=vector, embedder=get_embedder(), collections=[collection],
                             limit=everything, exact=True)[collection]


def lists_of(scope, text) -> dict[str, list[VectorHit]]:
    """The vector lists recall gathered for `text` (the question asked once, no time window)."""
    with candidates_memo():
        recall_evidence(scope=scope, query=text, query_vector=_query_vectors(scope, text))
        (found,) = candidates_module._memo.get().values()
    return found.vectors


def test_the_windows_holding_the_turns_come_back_scored_exactly_best_first(large):
    scope, embedder = large, get_embedder()
    vector = embedder.embed(["the kayak with Olga in Lisbon"])[0]
    turns = [h.target_id for h in vector_candidates(scope=scope, query_vector=vector, embedder=embedder,
                                                     collections=[Collection.TURN], limit=7, exact=False)[Collection.TURN]]
    found = windows_near_turns(scope=scope, turns=turns, query_vector=vector, embedder=embedder, collections=list(WINDOWS))

    order = {}  # each turn's session and place in it
    for session_id, ids in _sessions(scope).items():
        for place, turn_id in enumerate(ids):
            order[turn_id] = (session_id, place)
    for collection, radius in WINDOWS.items():
        wanted = {centre for centre, (session, place) in order.items()
                  if any(order[t][0] == session and abs(order[t][1] - place) <= radius for t in turns)}
        exact = {h.target_id: h.similarity for h in exact_list(scope, vector, collection)}
        hits = found[collection]
        assert {h.target_id for h in hits} == wanted
        assert len(hits) == len(wanted)  # each window once
        assert all(h.similarity == pytest.approx(exact[h.target_id], abs=1e-6) for h in hits)
        assert hits == sorted(hits, key=lambda h: (-h.similarity, h.target_id))
    assert windows_near_turns(scope=scope, turns=[], query_vector=vector, embedder=embedder, collections=list(WINDOWS)) == {}
    assert windows_near_turns(scope=scope, turns=turns, query_vector=vector, embedder=embedder, collections=[Collection.TURN]) == {}


def test_another_scope_s_turns_bring_no_window(large, cast):
    embedder = get_embedder()
    ingest_sessions_bulk(scope=cast.scope_b, sessions=corpus_lines(30), actor=Principal(user=cast.outsider), enqueue=False)
    index_pending(scope=cast.scope_b, full=True, embedder=embedder)
    theirs = list(Turn.objects.filter(scope=cast.scope_b).values_list("pk", flat=True))
    vector = embedder.embed(["the kayak"])[0]
    assert windows_near_turns(scope=large, turns=theirs, query_vector=vector, embedder=embedder, collections=list(WINDOWS)) == {}


def test_a_window_the_graph_missed_is_in_the_list_when_a_turn_near_the_question_is_in_it(large, settings, monkeypatch):
    # A window graph that finds nothing stands for one that misses near-duplicates: the windows
    # around the nearest turns are still listed, as an exact search orders them.
    real = vector_module.vector_candidates

    def graphs_missing_windows(**kwargs):
        found = real(**kwargs)
        return {c: hits for c, hits in found.items() if c not in WINDOWS or kwargs.get("exact")}

    monkeypatch.setattr(candidates_module, "vector_candidates", graphs_missing_windows)
    settings.RETRIEVAL_WINDOWS_NEAR_TURNS = 0
    assert not set(lists_of(large, QUESTION)) & set(WINDOWS)

    settings.RETRIEVAL_WINDOWS_NEAR_TURNS = 5
    lists = lists_of(large, QUESTION)
    nearest = [h.target_id for h in lists[Collection.TURN][:5]]
    vector = _query_vector(large)
    expected = windows_near_turns(scope=large, turns=nearest, query_vector=vector, embedder=get_embedder(), collections=list(WINDOWS))
    for collection in WINDOWS:
        assert [h.target_id for h in lists[collection]] == [h.target_id for h in expected[collection]]
        assert nearest[0] in {h.target_id for h in lists[collection]}  # the nearest turn's own window


def test_with_the_graph_s_own_hits_each_window_is_listed_once_in_the_exact_order(large, settings):
    settings.RETRIEVAL_WINDOWS_NEAR_TURNS = 30
    lists = lists_of(large, QUESTION)
    vector = _query_vector(large)
    for collection in WINDOWS:
        hits = lists[collection]
        assert len({h.target_id for h in hits}) == len(hits)
        assert hits == sorted(hits, key=lambda h: (-h.similarity, h.target_id))
        exact = exact_list(large, vector, collection)
        # At 400 turns the graph finds the exact list; with the near windows it is still that list.
        assert [h.target_id for h in hits] == [h.target_id for h in exact[: len(hits)]]


def test_a_small_scope_searched_exactly_is_not_changed(cast, monkeypatch):
    ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(60), actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=cast.scope_a, full=True, embedder=get_embedder())
    assert vector_search_exact(scope=cast.scope_a, embedder=get_embedder())

    def refuse(**kwargs):
        raise AssertionError("windows_near_turns called for a scope searched exactly")

    monkeypatch.setattr(candidates_module, "windows_near_turns", refuse)
    lists = lists_of(cast.scope_a, QUESTION)
    assert set(WINDOWS) <= set(lists)


def test_hits_union_keeps_each_document_once_in_the_exact_order_and_cuts_at_the_limit():
    a = [VectorHit("turn_w1", 5, 0.9), VectorHit("turn_w1", 7, 0.5)]
    b = [VectorHit("turn_w1", 7, 0.5), VectorHit("turn_w1", 3, 0.5), VectorHit("turn_w1", 9, 0.95)]
    assert [(h.target_id, h.similarity) for h in hits_union(a, b, limit=10)] == [(9, 0.95), (5, 0.9), (3, 0.5), (7, 0.5)]
    assert [h.target_id for h in hits_union(a, b, limit=2)] == [9, 5]
    assert hits_union([], [], limit=5) == []


def _sessions(scope) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for turn_id, session_id in Turn.objects.filter(scope=scope).order_by("session_id", "position").values_list("pk", "session_id"):
        out.setdefault(session_id, []).append(turn_id)
    return out


def _query_vectors(scope, text: str = QUESTION) -> QueryVectors:
    return QueryVectors.embed(get_embedder(), asked=text, unnamed=dense_text(text=text, speakers=scope_speakers(scope)), kinds=kinds_asked({}))


def _query_vector(scope) -> list[float]:
    return _query_vectors(scope).unnamed
