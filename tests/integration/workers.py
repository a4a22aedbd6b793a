"""Start and stop real Celery worker processes (`memoryweb worker`) against Redis, for queue tests."""

import os
import signal
import subprocess
import sys
import tempfile
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
                 hostname: str = "", **extra) -> subprocess.Popen:
    """`memoryweb worker` with one task at a time. `pool`: solo runs tasks in the worker process
    itself; prefork (Celery's default, one child here) is the one that enforces time limits.
    Its output goes to a file (a pipe nobody reads would fill and stall a busy worker): read it
    with `worker_log`, or from `stop_worker`."""
    command = [sys.executable, "-m", "memoryweb.cli", "worker", "--pool", pool, "--concurrency", "1", "-Q", queue_name,
               "--loglevel", "INFO"]
    if hostname:
        command += ["--hostname", hostname]
    log = tempfile.NamedTemporaryFile("w+", prefix="worker-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        command, cwd=ROOT, env=worker_env(redis_url, database_name, **extra), stdout=log, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )
    proc.log_path = Path(log.name)
    log.close()
    return proc


def worker_log(proc: subprocess.Popen) -> str:
    return proc.log_path.read_text(errors="replace")


def wait_until_ready(proc: subprocess.Popen, timeout: float = 90) -> None:
    """Until the worker says it is consuming (Celery logs `<name> ready.`); fails with its log if it exits."""
    def ready():
        if proc.poll() is not None:
            raise AssertionError(f"the worker exited with {proc.returncode}:\n{worker_log(proc)}")
        return " ready." in worker_log(proc)

    wait_for(ready, timeout=timeout)


def stop_worker(proc: subprocess.Popen, *, kill: bool = False) -> str:
    """Stop the worker (SIGTERM: a warm shutdown; `kill`: SIGKILL, as if its machine died) and
    return everything it logged."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    log = worker_log(proc)
    proc.log_path.unlink(missing_ok=True)
    return log


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
