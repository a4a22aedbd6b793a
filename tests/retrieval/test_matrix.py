"""A large scope's conversation held in memory (retrieval/matrix.py): its turn and window lists are the exact
search's, it is used only while no turn vector of the scope changed since it was built (a trigger logs every
change), it holds one scope's turns only, and a scope over the budget keeps its graphs."""

import pytest

from accounts.permissions import Principal
from memoryweb.providers.embedders import get_embedder
from memories.models import Embedding, Episode, Turn
from memories.services.bulk_ingest import ingest_sessions_bulk
from retrieval import matrix as matrix_module
from retrieval.forget import episode_forget
from retrieval.indexing import index_pending
from retrieval.matrix import matrix_for, matrix_forget, vector_changes_prune, vector_token
from retrieval.models import Collection
from retrieval.search import candidates as candidates_module
from retrieval.vector import vector_candidates, vector_search_exact
from tests.memories.test_bulk_ingest import corpus_lines
from tests.retrieval.test_windows_near_turns import QUESTION, _query_vector, lists_of

CONVERSATION = [Collection.TURN, Collection.TURN_W1, Collection.TURN_W2]
TEXTS = ["the kayak with Olga in Lisbon", "a quiet canoe trip", "what did they cook on Sunday", QUESTION]


@pytest.fixture
def large(settings, cast):
    """cast.scope_a holding 300 turns searched through graphs, with a budget for its matrix."""
    settings.RETRIEVAL_EXACT_BELOW = 100
    settings.RETRIEVAL_SCOPE_GRAPH_AT = 600
    settings.RETRIEVAL_MATRIX_MB = 64
    matrix_forget()
    ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(300), actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=cast.scope_a, full=True, embedder=get_embedder())
    assert not vector_search_exact(scope=cast.scope_a, embedder=get_embedder())
    yield cast.scope_a
    matrix_forget()


def exact(scope, vector, collection, limit) -> list[tuple[int, float]]:
    hits = vector_candidates(scope=scope, query_vector=vector, embedder=get_embedder(), collections=[collection], limit=limit, exact=True)
    return [(h.target_id, h.similarity) for h in hits[collection]]


def same_list(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    """The same documents in the same order as the exact search's first len(got) (`want` lists more), but
    where two similarities differ only in the last digits (the database computes in double precision from
    vectors stored to 7 digits, the matrix in single precision; the hash embedder makes exact ties)."""
    assert len(got) <= len(want)
    for (got_id, got_sim), (want_id, want_sim) in zip(got, want):
        assert got_sim == pytest.approx(want_sim, abs=1e-5)
        if got_id != want_id:
            assert dict(want).get(got_id) == pytest.approx(got_sim, abs=1e-5)


def test_the_turn_and_window_lists_are_the_exact_search_s(large):
    embedder = get_embedder()
    matrix = matrix_for(scope=large, embedder=embedder, background=False)
    assert matrix is not None and len(matrix.turn_ids) == Turn.objects.filter(scope=large).count()
    for text in TEXTS:
        vector = embedder.embed([text])[0]
        lists = matrix.lists(vector, collections=CONVERSATION, limit=40)
        for collection in CONVERSATION:
            same_list([(h.target_id, h.similarity) for h in lists[collection]], exact(large, vector, collection, 60))
            assert all(h.collection == collection for h in lists[collection])
    everything = matrix.lists(embedder.embed(["kayak"])[0], collections=[Collection.TURN], limit=10_000)[Collection.TURN]
    assert len(everything) == len(matrix.turn_ids)  # a limit past the scope's size lists every turn once


def test_vectors_of_any_length_rank_by_cosine_as_the_database_does(large):
    # A model's vectors need not be of unit length (the embedders shipped give unit vectors): turns stored at other
    # lengths, and a question's vector three times as long, rank as `<=>` ranks them.
    embedder = get_embedder()
    rows = list(Embedding.objects.filter(scope=large, target_type="doc_turn").order_by("pk"))
    for n, row in enumerate(rows):
        row.vec = [x * (0.5 + (n % 7)) for x in row.vec]
    Embedding.objects.bulk_update(rows, ["vec"])
    matrix = matrix_for(scope=large, embedder=embedder, background=False)
    vector = [3 * x for x in embedder.embed(["the kayak with Olga in Lisbon"])[0]]
    hits = matrix.lists(vector, collections=[Collection.TURN], limit=40)[Collection.TURN]
    same_list([(h.target_id, h.similarity) for h in hits], exact(large, vector, Collection.TURN, 60))


def test_recall_takes_its_conversation_lists_from_the_matrix_while_it_is_the_scope_s_latest(large, settings, monkeypatch):
    embedder = get_embedder()
    matrix_for(scope=large, embedder=embedder, background=False)

    def no_graph(**kwargs):
        assert kwargs["collections"] != [Collection.TURN] and not set(kwargs["collections"]) & set(CONVERSATION), kwargs
        return {}

    monkeypatch.setattr(candidates_module, "vector_candidates", no_graph)
    lists = lists_of(large, QUESTION)
    vector = _query_vector(large)
    limit = len(lists[Collection.TURN])
    assert limit == min(settings.RETRIEVAL_VECTOR_POOL_MAX, limit) and limit > 10
    for collection in CONVERSATION:
        same_list([(h.target_id, h.similarity) for h in lists[collection]], exact(large, vector, collection, limit + 20))


def test_a_change_to_the_scope_s_turn_vectors_retires_the_matrix(large, cast, monkeypatch):
    embedder = get_embedder()
    before = matrix_for(scope=large, embedder=embedder, background=False)
    assert matrix_for(scope=large, embedder=embedder) is before  # still the latest: no build

    # Forgetting an episode deletes its turn's vectors: the matrix is no longer used, and the one built
    # after holds the turn no more.
    turn = Turn.objects.filter(scope=large).order_by("pk")[5]
    episode = Episode.objects.get(scope=large, turn=turn)
    episode_forget(principal=cast.p_owner, scope=large, episode_public_id=episode.public_id)
    assert vector_token(large.pk) != before.token
    started = []
    monkeypatch.setattr(matrix_module.threading, "Thread", lambda **kwargs: started.append(kwargs) or _NotStarted())
    monkeypatch.setattr(matrix_module, "REBUILD_BACKOFF", 0)
    assert matrix_for(scope=large, embedder=embedder) is None  # the graphs answer while a new one is built
    assert not matrix_module._cache  # and the stale one, which holds the forgotten turn's vector, is dropped
    assert len(started) == 1 and matrix_for(scope=large, embedder=embedder) is None  # one build asked, not two
    matrix_module._building.clear()  # the build that was not started
    after = matrix_for(scope=large, embedder=embedder, background=False)
    assert turn.pk in before.turn_ids and turn.pk not in after.turn_ids

    # New turns indexed: the same.
    ingest_sessions_bulk(scope=large, sessions=corpus_lines(20, seed=9), actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=large, embedder=embedder)
    assert matrix_for(scope=large, embedder=embedder, background=False) is not after
    newest = matrix_for(scope=large, embedder=embedder)
    assert len(newest.turn_ids) == len(after.turn_ids) + 20


def test_the_trigger_logs_changes_to_turn_vectors_only(large):
    token = vector_token(large.pk)
    window = Embedding.objects.filter(scope=large, target_type="doc_turn_w1").first()
    window.vec = window.vec
    window.save()
    assert vector_token(large.pk) == token  # a window's vector is not the matrix's
    turn = Embedding.objects.filter(scope=large, target_type="doc_turn").first()
    turn.save()
    assert vector_token(large.pk)[0] == token[0] + 1
    Embedding.objects.filter(pk=turn.pk).delete()
    assert vector_token(large.pk)[0] == token[0] + 2


def test_the_log_is_pruned_to_its_newest_row_past_its_cap(large, monkeypatch):
    for row in Embedding.objects.filter(scope=large, target_type="doc_turn")[:3]:
        row.save()  # a change each
    count, top = vector_token(large.pk)
    assert count >= 4
    monkeypatch.setattr(matrix_module, "CHANGES_KEPT", count + 5)
    assert vector_changes_prune(large.pk) == 0
    monkeypatch.setattr(matrix_module, "CHANGES_KEPT", 1)
    assert vector_changes_prune(large.pk) == count - 1
    assert vector_token(large.pk) == (1, top)


def test_a_matrix_holds_its_own_scope_s_turns_only(large, cast):
    embedder = get_embedder()
    ingest_sessions_bulk(scope=cast.scope_b, sessions=corpus_lines(300), actor=Principal(user=cast.outsider), enqueue=False)
    index_pending(scope=cast.scope_b, full=True, embedder=embedder)
    mine = matrix_for(scope=large, embedder=embedder, background=False)
    theirs = matrix_for(scope=cast.scope_b, embedder=embedder, background=False)
    assert set(mine.turn_ids) == set(Turn.objects.filter(scope=large).values_list("pk", flat=True))
    assert set(theirs.turn_ids) == set(Turn.objects.filter(scope=cast.scope_b).values_list("pk", flat=True))
    assert not set(mine.turn_ids) & set(theirs.turn_ids)
    # Writes to one scope leave the other's matrix in use.
    Embedding.objects.filter(scope=cast.scope_b, target_type="doc_turn").first().delete()
    assert matrix_for(scope=large, embedder=embedder) is mine


def test_a_scope_over_the_budget_or_with_the_budget_off_keeps_its_graphs(large, settings):
    embedder = get_embedder()
    assert matrix_module._build(scope_id=large.pk, embedder=embedder, budget=1000) == vector_token(large.pk)
    settings.RETRIEVAL_MATRIX_MB = 0
    assert matrix_for(scope=large, embedder=embedder, background=False) is None
    assert lists_of(large, QUESTION)[Collection.TURN]  # the graphs answer


def test_the_least_recently_used_matrix_goes_first_when_the_budget_is_full(large, cast, monkeypatch):
    embedder = get_embedder()
    ingest_sessions_bulk(scope=cast.scope_b, sessions=corpus_lines(300), actor=Principal(user=cast.outsider), enqueue=False)
    index_pending(scope=cast.scope_b, full=True, embedder=embedder)
    first = matrix_for(scope=large, embedder=embedder, background=False)
    # A budget that holds one of the two: the newer stays.
    monkeypatch.setattr(type(first), "nbytes", property(lambda self: 40 * 2**20))
    matrix_for(scope=cast.scope_b, embedder=embedder, background=False)
    assert set(matrix_module._cache) == {(cast.scope_b.pk, embedder.name)}


def test_a_scope_written_to_again_right_after_a_build_waits_before_the_next(large, monkeypatch):
    embedder = get_embedder()
    matrix_for(scope=large, embedder=embedder, background=False)
    started = []
    monkeypatch.setattr(matrix_module.threading, "Thread", lambda **kwargs: started.append(kwargs) or _NotStarted())
    Embedding.objects.filter(scope=large, target_type="doc_turn").first().save()  # a change
    seconds = matrix_module._last_build[(large.pk, embedder.name)][1]
    monkeypatch.setattr(matrix_module, "REBUILD_BACKOFF", 3600 / max(seconds, 1e-6))  # the back-off: an hour
    assert matrix_for(scope=large, embedder=embedder) is None and not started  # the graphs answer, nothing is read
    monkeypatch.setattr(matrix_module, "REBUILD_BACKOFF", 0)
    assert matrix_for(scope=large, embedder=embedder) is None and len(started) == 1  # past it: a build is asked


class _NotStarted:
    def start(self):
        pass


def test_the_matrix_lists_are_the_same_on_one_core_or_through_blas(settings, large, monkeypatch):
    """RETRIEVAL_MATRIX_BLAS: numpy's one-core loop (the default) and BLAS's threads sum in different orders; the
    lists are the same (ids and order) and the similarities agree to 1e-6."""
    held = matrix_for(scope=large, embedder=get_embedder(), background=False)
    vector = _query_vector(large)
    settings.RETRIEVAL_MATRIX_BLAS = False
    looped = []
    monkeypatch.setattr(matrix_module.np, "vecdot", lambda *a, _real=matrix_module.np.vecdot: looped.append(1) or _real(*a))
    one_core = held.lists(vector, collections=CONVERSATION, limit=20)
    assert looped == [1]  # the default takes numpy's loop, not BLAS
    settings.RETRIEVAL_MATRIX_BLAS = True
    blas = held.lists(vector, collections=CONVERSATION, limit=20)
    assert looped == [1]  # and the setting takes BLAS
    assert {c: [h.target_id for h in hits] for c, hits in one_core.items()} == {c: [h.target_id for h in hits] for c, hits in blas.items()}
    assert all(abs(a.similarity - b.similarity) < 1e-6 for c in CONVERSATION for a, b in zip(one_core[c], blas[c]))


def test_a_matrix_read_in_small_blocks_is_the_one_read_whole(large, monkeypatch):
    """The build reads, parses and composes a block of rows at a time (READ_ROWS; a million turns' vectors as
    text would not fit in memory at once): blocks that split sessions and windows give the same matrix, bit for
    bit, as one block."""
    embedder = get_embedder()
    monkeypatch.setattr(matrix_module, "READ_ROWS", 10_000)
    whole = matrix_module._build(scope_id=large.pk, embedder=embedder, budget=2**30)
    monkeypatch.setattr(matrix_module, "READ_ROWS", 7)  # 300 turns: 43 blocks, windows across their edges
    blocks = matrix_module._build(scope_id=large.pk, embedder=embedder, budget=2**30)
    assert len(whole.turn_ids) == len(blocks.turn_ids) == Turn.objects.filter(scope=large).count()
    assert (whole.turn_ids == blocks.turn_ids).all() and (whole.vectors == blocks.vectors).all()
    assert set(whole.inverse_norms) == set(blocks.inverse_norms) == set(matrix_module.matrix_collections())
    for collection in whole.inverse_norms:
        assert (whole.inverse_norms[collection] == blocks.inverse_norms[collection]).all()
    assert whole.inverse_norms[Collection.TURN_W2].min() > 0  # every window has a length
