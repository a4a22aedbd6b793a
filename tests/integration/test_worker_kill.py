"""A real worker is killed (SIGKILL) while it holds an episode; after a restart the broker
hands the unacknowledged message out again and the episode completes."""

import time

import pytest
from celery import Celery
from django.db import connection

from memories.models import Episode, EpisodeStatus, Fact
from memories.services.ingest import remember
from tests.integration.workers import flush_redis, start_worker, stop_worker, wait_for

# Redis hands an unacknowledged message to another worker only after the visibility timeout.
VISIBILITY_TIMEOUT = 5
# The settings refuse a visibility timeout not above the stale-claim window and the time limits
# (the solo pool of these workers does not enforce time limits, so the doomed task sleeps on).
WORKER_ENV = {
    "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT), "MEMORYWEB_EXTRACT_STALE_SECONDS": "4",
    "MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT": "2", "MEMORYWEB_EXTRACT_TIME_LIMIT": "3",
    "MEMORYWEB_INDEX_SOFT_TIME_LIMIT": "2", "MEMORYWEB_INDEX_TIME_LIMIT": "3",
    "LLM_PROVIDER": "offline", "EMBEDDER": "hash",
}


def _status(pk: int) -> str:
    return Episode.objects.values_list("status", flat=True).get(pk=pk)


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_episode_whose_worker_is_killed_mid_task_completes_after_a_restart(cast, redis_url):
    flush_redis(redis_url)
    database = connection.settings_dict["NAME"]  # the worker uses this test database
    result = remember(scope=cast.scope_a, text="I moved from San Francisco to New York", speaker="ankesh",
                      occurred_at="2025-02-10", actor=cast.p_owner, enqueue=False)
    episode = Episode.objects.get(public_id=result.episodes[0].episode_id)
    client = Celery("memoryweb-test", broker=redis_url, set_as_current=False)
    client.conf.task_serializer = "json"

    # The first worker claims the episode, then sleeps in the test hook until it is killed.
    doomed = start_worker(redis_url, database_name=database, MEMORYWEB_TEST_EXTRACT_DELAY="120", **WORKER_ENV)
    try:
        client.send_task("memories.extract_episode", args=[episode.pk])
        wait_for(lambda: _status(episode.pk) == EpisodeStatus.PROCESSING, timeout=90)
        delivered_at = time.monotonic()
    finally:
        first_log = stop_worker(doomed, kill=True)
    episode.refresh_from_db()
    assert (episode.status, episode.attempts) == (EpisodeStatus.PROCESSING, 1), first_log
    assert not Fact.objects.exists()

    time.sleep(max(0.0, VISIBILITY_TIMEOUT + 1 - (time.monotonic() - delivered_at)))
    survivor = start_worker(redis_url, database_name=database, **WORKER_ENV)
    try:
        wait_for(lambda: _status(episode.pk) == EpisodeStatus.DONE, timeout=90)
    finally:
        second_log = stop_worker(survivor)

    episode.refresh_from_db()
    assert episode.attempts == 2 and episode.error == "" and episode.text == "I moved from San Francisco to New York"
    assert "memories.extract_episode" in second_log and "succeeded" in second_log
    facts = {(f.value, f.status) for f in Fact.objects.filter(attribute="lives_in")}
    assert facts == {("New York", "active"), ("San Francisco", "superseded")}
