"""The index task's runs of one scope coalesce: a run that finds another waiting for the scope's
lock returns without indexing (the waiter sweeps after it); otherwise it indexes, and is no
longer the waiter once its sweep starts."""

from datetime import UTC, datetime

import pytest
from django.core.cache import cache

from memories.models import Episode
from retrieval.indexing import index_queued
from retrieval.models import SearchDocument

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiter_key(cast):
    key = f"memoryweb:index-waiter:{cast.scope_a.pk}"
    cache.delete(key)
    yield key
    cache.delete(key)


def _episode(scope, text):
    return Episode.objects.create(scope=scope, text=text, speaker="ada", occurred_at=datetime(2025, 1, 1, tzinfo=UTC))


def test_a_run_queued_while_another_waits_returns_without_indexing(cast, waiter_key):
    _episode(cast.scope_a, "I moved to Lisbon")
    cache.set(waiter_key, "the-waiting-run", 60)
    assert index_queued(scope=cast.scope_a, run_id="a-later-run") is None
    assert not SearchDocument.objects.in_scope(cast.scope_a).exists()
    # The waiter itself (or its redelivered message, which carries its id) does sweep.
    assert index_queued(scope=cast.scope_a, run_id="the-waiting-run") == 1
    assert cache.get(waiter_key) is None


def test_with_no_waiter_a_run_indexes_and_leaves_no_waiter_behind(cast, waiter_key):
    episode = _episode(cast.scope_a, "I moved to Lisbon")
    assert index_queued(scope=cast.scope_a, run_id="run-1") == 1
    assert cache.get(waiter_key) is None
    assert list(SearchDocument.objects.in_scope(cast.scope_a).values_list("target_id", flat=True)) == [episode.pk]
    assert index_queued(scope=cast.scope_a, run_id="run-2") == 0  # nothing left to index
