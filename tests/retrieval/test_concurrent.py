"""The vector search runs beside BM25 on its own connection, only where that is safe."""

import threading

import pytest
from django.db import connection
from django.utils import timezone

from memories.models import Episode
from retrieval import concurrent
from retrieval.concurrent import side_by_side
from retrieval.indexing import index_pending
from retrieval.services import recall


def where() -> tuple[int, int]:
    """This thread and its database backend."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return threading.get_ident(), cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_background_work_runs_on_another_thread_and_connection(cast):
    ahead, first, second = side_by_side(where, where, where)
    assert ahead == (threading.get_ident(), where()[1])
    assert ahead[1] not in (first[1], second[1])  # other backends
    assert ahead[0] not in (first[0], second[0])


@pytest.mark.django_db
def test_inside_a_transaction_both_run_here_because_another_connection_would_not_see_its_rows(cast):
    assert connection.in_atomic_block
    ahead, behind = side_by_side(where, where)
    assert behind == ahead == (threading.get_ident(), where()[1])


@pytest.mark.django_db(transaction=True)
def test_it_can_be_switched_off(cast, settings):
    settings.RETRIEVAL_CONCURRENT = False
    ahead, behind = side_by_side(where, where)
    assert behind == ahead


@pytest.mark.django_db(transaction=True)
def test_with_another_search_in_flight_a_search_runs_its_parts_in_turn_here(cast):
    """The cores are busy with the other search: no hand-offs to pool or embedding threads."""
    with concurrent.searching():  # this search alone: side by side
        ahead, behind = side_by_side(where, where)
        assert ahead[0] != behind[0] and ahead[1] != behind[1]
        assert concurrent.soon(threading.get_ident)._future is not None
        with concurrent.searching():  # a second search in flight (another request's)
            ahead, behind = side_by_side(where, where)
            assert behind == ahead == (threading.get_ident(), where()[1])
            work = concurrent.soon(threading.get_ident)
            assert work._future is None and work.get() == threading.get_ident()
    assert concurrent._in_flight == 0  # each search counted out again, an exception's too
    with pytest.raises(ZeroDivisionError), concurrent.searching():
        1 / 0
    assert concurrent._in_flight == 0


@pytest.mark.django_db(transaction=True)
def test_recall_counts_itself_in_flight_while_it_runs(cast, monkeypatch):
    seen = []
    real = concurrent.side_by_side

    def spy(*work):
        seen.append(concurrent._in_flight)
        return real(*work)

    monkeypatch.setattr("retrieval.search.candidates.side_by_side", spy)
    Episode.objects.create(scope=cast.scope_a, text="I adopted a grey cat called Miso", speaker="ankesh", occurred_at=timezone.now())
    index_pending(scope=cast.scope_a)
    assert recall(scope=cast.scope_a, query="what pet do I have?").items
    assert seen == [1] and concurrent._in_flight == 0


@pytest.mark.django_db(transaction=True)
def test_a_failure_on_the_pool_connection_runs_the_work_again_here(cast, caplog):
    calls = []

    def flaky():
        calls.append(threading.get_ident())
        if len(calls) == 1:
            raise connection.Database.OperationalError("server closed the connection unexpectedly")
        return where()

    ahead, behind = side_by_side(where, flaky)
    assert len(calls) == 2 and calls[0] != calls[1] == threading.get_ident()
    assert behind == ahead
    assert "running it here" in caplog.text
    # The pool's next call works again (its connection was closed and is reopened).
    ahead, behind = side_by_side(where, where)
    assert behind[0] != ahead[0]


@pytest.mark.django_db(transaction=True)
def test_recall_finds_the_same_with_and_without_the_second_connection(cast, settings):
    scope = cast.scope_a
    for text in ["I adopted a grey cat called Miso", "We hiked the Pyrenees in June", "My sister plays the cello"]:
        Episode.objects.create(scope=scope, text=text, speaker="ankesh", occurred_at=timezone.now())
    index_pending(scope=scope)
    together = [(i.kind, i.id) for i in recall(scope=scope, query="what pet do I have?").items]
    settings.RETRIEVAL_CONCURRENT = False
    alone = [(i.kind, i.id) for i in recall(scope=scope, query="what pet do I have?").items]
    assert together == alone and together[0][0] == "episode"


@pytest.mark.django_db(transaction=True)
def test_a_forked_child_starts_its_own_pool(cast):
    import os

    side_by_side(where, where)  # the parent has a pool with a live thread
    assert concurrent._executor is not None
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its pool must be a new one (the parent's threads do not exist here)
        os.write(write, b"none" if concurrent._executor is None else b"inherited")
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(read, 20) == b"none"


@pytest.mark.django_db(transaction=True)
def test_evidence_over_several_collections_is_the_same_with_one_connection_per_search(cast, settings):
    from memories.models import Session, Turn
    from retrieval.services import recall_evidence

    scope = cast.scope_a
    session = Session.objects.create(scope=scope, external_id="s1")
    lines = ["I adopted a grey cat called Miso", "What colour is she?", "Grey, with white paws", "We hiked the Pyrenees",
             "My sister plays the cello", "Which cello piece?", "Bach's first suite"]
    for position, text in enumerate(lines):
        Turn.objects.create(scope=scope, session=session, external_id=f"D1:{position}", position=position, speaker="ankesh",
                            text=text, occurred_at=timezone.now())
    index_pending(scope=scope)
    result = recall_evidence(scope=scope, query="what does my cat look like?")
    together = [(i.kind, i.id) for i in result.items]
    assert result.timings["vector"] > 0 and len(together) > 3
    settings.RETRIEVAL_CONCURRENT = False
    alone = [(i.kind, i.id) for i in recall_evidence(scope=scope, query="what does my cat look like?").items]
    assert together == alone


class _Recording:
    """The configured embedder, noting which thread embeds and failing on demand."""

    def __init__(self, inner, *, fail: Exception | None = None):
        self.name, self.dim, self._inner, self.fail, self.threads = inner.name, inner.dim, inner, fail, []

    def embed(self, texts):
        self.threads.append(threading.get_ident())
        if self.fail is not None and texts == ["what pet do I have?"]:
            raise self.fail
        return self._inner.embed(texts)


@pytest.mark.django_db(transaction=True)
def test_the_query_is_embedded_on_its_own_thread_and_recall_says_how_long_it_waited(cast, monkeypatch):
    from memoryweb.providers.embedders import get_embedder

    scope = cast.scope_a
    Episode.objects.create(scope=scope, text="I adopted a grey cat called Miso", speaker="ankesh", occurred_at=timezone.now())
    index_pending(scope=scope)
    embedder = _Recording(get_embedder())
    monkeypatch.setattr("retrieval.search.pipeline.scope_embedder", lambda scope, **_: embedder)
    result = recall(scope=scope, query="what pet do I have?")
    assert result.items and "Miso" in result.items[0].text
    assert embedder.threads and threading.get_ident() not in embedder.threads
    assert 0 <= result.timings["embed_wait"] <= result.timings["embed"] + 0.05
    assert result.timings["total_without_embedding"] <= result.timings["total"]


@pytest.mark.parametrize("concurrently", [True, False])
@pytest.mark.django_db(transaction=True)
def test_an_embedder_failure_during_recall_is_the_callers_error_not_a_connection_retry(cast, monkeypatch, settings, caplog, concurrently):
    from memoryweb.providers.embedders import EmbedderError, get_embedder

    settings.RETRIEVAL_CONCURRENT = concurrently
    scope = cast.scope_a
    Episode.objects.create(scope=scope, text="I adopted a grey cat called Miso", speaker="ankesh", occurred_at=timezone.now())
    index_pending(scope=scope)
    embedder = _Recording(get_embedder(), fail=EmbedderError("openai-text-embedding-3-small: answered HTTP 503: busy", retryable=True))
    monkeypatch.setattr("retrieval.search.pipeline.scope_embedder", lambda scope, **_: embedder)
    with pytest.raises(EmbedderError, match="503"):
        recall(scope=scope, query="what pet do I have?")
    assert "running it here" not in caplog.text
    assert len(embedder.threads) == 1  # embedded once, not again on the caller's connection


@pytest.mark.django_db(transaction=True)
def test_a_scope_asked_again_has_its_query_embedded_before_its_index_state_is_read(cast, monkeypatch):
    """The second recall starts the model on the question with the speakers the first one read;
    when they still hold, that is the one embedding; when they changed, it embeds again with the
    real ones, so the vector is always the right one."""
    from memoryweb.providers.embedders import get_embedder
    from memories.services.ingest import ingest_session
    from retrieval.search import pipeline

    scope = cast.scope_a
    pipeline._last_read.pop(scope.pk, None)
    messages = [{"id": "1", "speaker": "Caroline", "text": "I adopted a grey cat called Miso", "occurred_at": "2024-01-01T10:00:00+00:00"}]
    ingest_session(scope=scope, session_id="s1", messages=messages, actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope)
    embedder = _Recording(get_embedder())
    monkeypatch.setattr("retrieval.search.pipeline.scope_embedder", lambda scope, **_: embedder)
    ask = dict(scope=scope, query="what pet does Caroline have?", filters={"kinds": ["turn"]})
    recall(**ask)
    assert len(embedder.threads) == 1
    recall(**ask)
    assert len(embedder.threads) == 2  # one more: the early one, confirmed
    more = [{"id": "2", "speaker": "Melanie", "text": "Caroline, Miso is lovely", "occurred_at": "2024-01-02T10:00:00+00:00"}]
    ingest_session(scope=scope, session_id="s1", messages=more, actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope)
    pipeline._last_read[scope.pk] = (pipeline._last_read[scope.pk][0], ("Melanie",))  # what an older read saw
    result = recall(**ask)
    assert len(embedder.threads) == 4  # the early guess was wrong: embedded again with the real speakers
    assert result.items and "Miso" in result.items[0].text
