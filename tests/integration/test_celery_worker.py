"""A real worker process against the machine's Redis runs a task sent through the broker."""

import pytest
from celery import Celery

from tests.integration.workers import flush_redis, start_worker, stop_worker


@pytest.mark.redis
@pytest.mark.slow
def test_a_real_worker_runs_a_task_sent_through_redis(redis_url):
    flush_redis(redis_url)
    client = Celery("memoryweb-test", broker=redis_url, backend=redis_url)
    client.conf.task_serializer = "json"
    worker = start_worker(redis_url)
    try:
        result = client.send_task("memoryweb.ping", args=["hello through redis"])
        assert result.get(timeout=90) == "hello through redis"
    finally:
        log = stop_worker(worker)
    assert "memoryweb.ping" in log


def test_without_a_broker_tasks_run_eagerly(settings):
    from memoryweb.celery import app, ping

    assert app.conf.task_always_eager is True
    assert ping.delay("inline").get() == "inline"
