"""With a broker, index runs of one scope coalesce: while a run is queued and has not started its
sweep (the scope's mark in the cache), a change queues no other; the run clears the mark once it
holds the scope's lock, and the next change queues a run again. (Tasks run in-process in the test,
so a queued run is seen by what it indexed.)"""

from datetime import UTC, datetime

import pytest
from django.core.cache import cache

from memories.models import Episode
from memories.services.indexing import queue_index
from retrieval.indexing import index_queued
from retrieval.models import SearchDocument

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker(settings, cast):
    settings.REDIS_URL = "redis://127.0.0.1:6379/0"  # only the branch taken: the test's tasks still run in-process
    key = f"memoryweb:index-queued:{cast.scope_a.pk}"
    cache.delete(key)
    yield key
    cache.delete(key)


def _episode(scope, text):
    return Episode.objects.create(scope=scope, text=text, speaker="ada", occurred_at=datetime(2025, 1, 1, tzinfo=UTC))


def _indexed(scope) -> set[int]:
    return set(SearchDocument.objects.in_scope(scope).values_list("target_id", flat=True))


def test_a_change_while_a_run_is_queued_queues_no_other_and_the_run_covers_it(cast, broker, django_capture_on_commit_callbacks):
    scope = cast.scope_a
    first = _episode(scope, "I moved to Lisbon")
    with django_capture_on_commit_callbacks(execute=True):
        queue_index(scope)  # queued (here: run at once) and marked
    assert _indexed(scope) == {first.pk} and cache.get(broker) is not None

    second = _episode(scope, "I moved to Porto")
    with django_capture_on_commit_callbacks(execute=True):
        queue_index(scope)  # a run is marked queued: no other
    assert _indexed(scope) == {first.pk}

    assert index_queued(scope=scope) == 1  # the queued run, on a worker: clears the mark, then sweeps
    assert _indexed(scope) == {first.pk, second.pk} and cache.get(broker) is None

    third = _episode(scope, "I moved to Berlin")
    with django_capture_on_commit_callbacks(execute=True):
        queue_index(scope)  # no run queued any more: this change queues one
    assert _indexed(scope) == {first.pk, second.pk, third.pk}


def test_the_mark_is_set_only_after_the_commit(cast, broker, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        queue_index(cast.scope_a)
        assert cache.get(broker) is None  # a sweep starting now could miss the rows being committed
    assert len(callbacks) == 1
