"""Healing through a real worker on Redis: an episode whose queue message was lost and one whose
worker died are completed by the periodic healing task; a second run finds nothing to do. And a
soft time limit (enforced by the prefork pool) leaves the episode failed with its reason."""

from datetime import timedelta

import pytest
from celery import Celery
from django.db import connection
from django.utils import timezone

from memoryweb.providers.embedders import get_embedder
from memories.models import Episode, EpisodeStatus, Fact
from memories.services.ingest import remember
from retrieval.indexing import index_behind
from tests.integration.workers import flush_redis, start_worker, stop_worker, wait_for

WORKER_ENV = {"LLM_PROVIDER": "offline", "EMBEDDER": "hash"}
NOTHING = {"pending_episodes": 0, "stale_episodes": 0, "entity_vectors": 0, "search_indexes": 0}


def _client(redis_url: str) -> Celery:
    client = Celery("memoryweb-test", broker=redis_url, backend=redis_url, set_as_current=False)
    client.conf.update(task_serializer="json", result_serializer="json", accept_content=["json"])
    return client


def _unqueued(cast, text: str) -> Episode:
    """Committed `pending`, and no message sent: as when the broker was down at the commit."""
    result = remember(scope=cast.scope_a, text=text, speaker="ankesh", occurred_at="2025-02-10", actor=cast.p_owner, enqueue=False)
    return Episode.objects.get(public_id=result.episodes[0].episode_id)


def _status(pk: int) -> str:
    return Episode.objects.values_list("status", flat=True).get(pk=pk)


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_healing_task_completes_a_lost_and_a_stuck_episode_and_then_finds_nothing(cast, redis_url, settings):
    flush_redis(redis_url)
    lost = _unqueued(cast, "I moved from San Francisco to New York")
    stuck = _unqueued(cast, "I love chess")
    now = timezone.now()
    Episode.objects.filter(pk=lost.pk).update(ingested_at=now - timedelta(minutes=10))
    Episode.objects.filter(pk=stuck.pk).update(
        status=EpisodeStatus.PROCESSING, claim_id="task-of-a-dead-worker", attempts=1,
        claimed_at=now - timedelta(seconds=settings.MEMORYWEB_EXTRACT_STALE_SECONDS + 60),
    )
    client = _client(redis_url)
    worker = start_worker(redis_url, database_name=connection.settings_dict["NAME"], **WORKER_ENV)
    try:
        first = client.send_task("retrieval.heal").get(timeout=120)
        assert first == {"pending_episodes": 1, "stale_episodes": 1, "entity_vectors": 0, "search_indexes": 1}
        wait_for(lambda: _status(lost.pk) == _status(stuck.pk) == EpisodeStatus.DONE, timeout=120)
        wait_for(lambda: not index_behind(scope=cast.scope_a, model=get_embedder().name), timeout=120)
        second = client.send_task("retrieval.heal").get(timeout=120)
    finally:
        log = stop_worker(worker)
    assert second == NOTHING, log
    assert "memories.extract_episode" in log and "retrieval.index_scope" in log
    stuck.refresh_from_db()
    assert (stuck.attempts, stuck.error) == (2, "")
    assert {(f.value, f.status) for f in Fact.objects.filter(attribute="lives_in")} == {
        ("New York", "active"), ("San Francisco", "superseded")}


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_extraction_past_its_soft_time_limit_fails_with_the_reason(cast, redis_url):
    flush_redis(redis_url)
    episode = _unqueued(cast, "I moved from San Francisco to New York")
    worker = start_worker(
        redis_url, database_name=connection.settings_dict["NAME"], pool="prefork",
        MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT="2", MEMORYWEB_EXTRACT_TIME_LIMIT="10", MEMORYWEB_TEST_EXTRACT_DELAY="60",
        **WORKER_ENV,
    )
    try:
        _client(redis_url).send_task("memories.extract_episode", args=[episode.pk])
        wait_for(lambda: _status(episode.pk) == EpisodeStatus.FAILED, timeout=120)
    finally:
        log = stop_worker(worker)
    episode.refresh_from_db()
    assert episode.error.startswith("Extraction took longer than its time limit (2 s, MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT)"), log
    assert "Soft time limit" in log
    assert episode.claim_id == "" and episode.text == "I moved from San Francisco to New York"
    assert not Fact.objects.exists()
