"""Start and stop real Celery worker processes against Redis, for queue tests."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[2]


def worker_env(redis_url: str, database_name: str | None = None, **extra) -> dict:
    env = {**os.environ, "REDIS_URL": redis_url, "DJANGO_SETTINGS_MODULE": "memoryweb.settings", **extra}
    if database_name:
        env["MEMORYWEB_DATABASE_NAME"] = database_name  # the worker uses pytest-django's test database
    return env


def start_worker(redis_url: str, *, database_name: str | None = None, queue_name: str = "celery", pool: str = "solo",
                 **extra) -> subprocess.Popen:
    """`pool`: solo runs tasks in the worker process itself; prefork (Celery's default, one child
    here) is the one that enforces time limits."""
    command = [
        sys.executable, "-m", "celery", "-A", "memoryweb", "worker", "--pool", pool, "--concurrency", "1",
        "--without-gossip", "--without-mingle", "--without-heartbeat", "-Q", queue_name, "--loglevel", "INFO",
    ]
    return subprocess.Popen(
        command, cwd=ROOT, env=worker_env(redis_url, database_name, **extra), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def stop_worker(proc: subprocess.Popen, *, kill: bool = False) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    return proc.stdout.read() if proc.stdout else ""


def flush_redis(redis_url: str) -> None:
    redis.Redis.from_url(redis_url).flushdb()


def wait_for(predicate, timeout: float = 60, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("condition not met in time")
