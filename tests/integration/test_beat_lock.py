"""One scheduler for the fleet (memoryweb/beat_scheduler.py): two real `memoryweb beat` processes on
one Redis send each periodic run once — only the lock's holder sends, the other says it is
standing by — and when the leader is killed the standby takes over."""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import redis
from django.db import connection

from tests.integration.workers import ROOT, flush_redis, stop_worker, wait_for, worker_env, worker_log

LOCK_SECONDS = 3
# Healing every second: the shortest schedule memoryweb has, and no worker runs, so every run
# stays in the queue to be counted.
BEAT_ENV = {"MEMORYWEB_HEAL_INTERVAL_SECONDS": "1", "MEMORYWEB_BEAT_LOCK_SECONDS": str(LOCK_SECONDS)}


def start_beat(redis_url: str, schedule: Path) -> subprocess.Popen:
    log = tempfile.NamedTemporaryFile("w+", prefix="beat-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memoryweb.cli", "beat", "--schedule", str(schedule), "--loglevel", "INFO"],
        cwd=ROOT, env=worker_env(redis_url, connection.settings_dict["NAME"], **BEAT_ENV), stdout=log,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    proc.log_path = Path(log.name)
    log.close()
    return proc


def heal_runs(redis_url: str) -> list[int]:
    """The pid of the process that sent each heal message waiting in the queue, oldest first."""
    client = redis.Redis.from_url(redis_url)
    pids = []
    for raw in reversed(client.lrange("celery", 0, -1)):  # kombu pushes on the left
        headers = json.loads(raw)["headers"]
        if headers["task"] == "retrieval.heal":
            pids.append(int(headers["origin"].removeprefix("gen").split("@")[0]))
    return pids


def said(proc, words: str) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"beat exited with {proc.returncode}:\n{worker_log(proc)}")
    return words in worker_log(proc)


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.django_db
def test_two_beats_schedule_each_run_once_and_the_standby_takes_over(redis_url, tmp_path):
    flush_redis(redis_url)
    first = start_beat(redis_url, tmp_path / "first-schedule")
    second = start_beat(redis_url, tmp_path / "second-schedule")
    beats, logs = [first, second], {}
    try:
        wait_for(lambda: all(said(b, " leads:") or said(b, " standing by:") for b in beats), timeout=90)
        [leader] = [b for b in beats if said(b, " leads:")]
        [standby] = [b for b in beats if b is not leader]
        assert "schedules the periodic tasks; this one takes over" in worker_log(standby)

        started, before = time.monotonic(), len(heal_runs(redis_url))
        time.sleep(2 * LOCK_SECONDS)
        runs = heal_runs(redis_url)
        elapsed = time.monotonic() - started
        assert set(runs) == {leader.pid}  # the standby sent nothing
        # Once a second, not twice: two schedulers would send about 2 * elapsed.
        assert 0 < len(runs) - before <= elapsed + 1.5

        logs = {leader.pid: stop_worker(leader, kill=True)}  # no clean stop: its lock has to expire
        killed_at, sent_by_leader = time.monotonic(), len(runs)
        wait_for(lambda: said(standby, " leads:"), timeout=6 * LOCK_SECONDS)
        took_over = time.monotonic() - killed_at
        assert took_over <= LOCK_SECONDS * 4 / 3 + 2
        wait_for(lambda: len(heal_runs(redis_url)) > sent_by_leader + 2, timeout=10)
        after = heal_runs(redis_url)[sent_by_leader:]
        assert set(after) == {standby.pid}
    finally:
        logs.update({b.pid: stop_worker(b) for b in beats if b.pid not in logs})
    assert "standing by" in logs[standby.pid] and " leads:" in logs[leader.pid]
