"""recall never waits for an indexer and never indexes in bulk: what is not indexed yet is found
by its raw text and counted as pending."""

from contextlib import contextmanager

import pytest
from django.db import connection, connections

from memories.models import Episode
from memoryweb.providers.embedders import get_embedder
from retrieval import indexing
from retrieval.indexing import CATCH_UP_ROWS, index_pending
from retrieval.models import SearchDocument
from retrieval.services import recall, recall_evidence
from tests.retrieval.test_search import NOW, at, note

pytestmark = pytest.mark.django_db


@contextmanager
def index_lock_held_elsewhere(scope):
    """The scope's indexing lock, held by another database session, as a running index task holds it."""
    other = connections.create_connection("default")  # a second session, not the test's
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [indexing._LOCK_NAMESPACE, scope.pk])
        yield
    finally:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock_all()")
        other.close()


@contextmanager
def no_waiting():
    """A statement that waits on a lock fails within seconds instead of hanging the suite."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL lock_timeout = '3s'")
        cursor.execute("SET LOCAL statement_timeout = '20s'")
    yield


@pytest.fixture
def embedded(monkeypatch):
    """Every text the embedder in force is asked to embed."""
    texts: list[str] = []
    embedder = get_embedder()
    original = type(embedder).embed

    def counting(self, batch):
        texts.extend(batch)
        return original(self, batch)

    monkeypatch.setattr(type(embedder), "embed", counting)
    return texts


def test_recall_answers_while_another_session_holds_the_index_lock(cast):
    scope = cast.scope_a
    note(scope, "I adopted a greyhound called Biscuit")
    index_pending(scope=scope)
    fresh = note(scope, "I started learning the cello", when=at(2025, 5, 1))  # stored while the task embeds
    with index_lock_held_elsewhere(scope), no_waiting():
        result = recall(scope=scope, query="when did I start learning the cello?", now=NOW)
    assert result.pending == 1
    assert result.items[0].pk == fresh.pk and any(w.startswith("not indexed yet") for w in result.items[0].why)
    assert not SearchDocument.objects.filter(collection="episode", target_id=fresh.pk).exists()  # left to the task
    # With the lock free again, the next recall indexes the small backlog itself.
    assert recall(scope=scope, query="cello", now=NOW).pending == 0
    assert SearchDocument.objects.filter(collection="episode", target_id=fresh.pk).exists()


def test_the_index_lock_would_have_blocked_a_waiting_indexer(cast):
    """The guard above can fail: an indexer that waits for the lock is stopped by the timeout."""
    with index_lock_held_elsewhere(cast.scope_a), no_waiting():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '200ms'")
        with pytest.raises(Exception, match="lock timeout"):
            index_pending(scope=cast.scope_a, full=True)


def test_recall_does_not_embed_a_large_backlog_but_finds_and_counts_it(cast, embedded):
    scope = cast.scope_a
    backlog = CATCH_UP_ROWS * 3
    Episode.objects.bulk_create(
        [Episode(scope=scope, text=f"routine note number {i}", speaker="ankesh", occurred_at=at(2025, 1, 1)) for i in range(backlog - 1)]
        + [Episode(scope=scope, text="I booked a trip to Zanzibar", speaker="ankesh", occurred_at=at(2025, 2, 1))]
    )
    result = recall(scope=scope, query="where did I book a trip to?", now=NOW)
    assert result.pending == backlog
    assert result.items[0].text == "I booked a trip to Zanzibar"
    assert len(embedded) <= 1  # the question at most, never the backlog
    assert not SearchDocument.objects.filter(scope=scope).exists()
    # The index task's work: afterwards nothing is pending and the search is the indexed one.
    index_pending(scope=scope, full=True)
    again = recall_evidence(scope=scope, query="where did I book a trip to?", now=NOW)
    assert again.pending == 0 and again.items[0].text == "I booked a trip to Zanzibar"
    assert not any(w.startswith("not indexed yet") for w in again.items[0].why)


def test_recall_indexes_a_small_backlog_itself(cast, embedded):
    scope = cast.scope_a
    note(scope, "I love football")
    result = recall(scope=scope, query="football", now=NOW)
    assert result.pending == 0 and result.items[0].text == "I love football"
    assert "I love football" in embedded  # the episode's words, embedded inline: one small batch
