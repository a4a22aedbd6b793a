"""`memoryweb bench fleet`: episodes/s through a fleet of web processes and workers on this machine.

`webs` web processes (`memoryweb serve`, as `bench api` starts them) are started once; then for
each worker count M, M workers (`memoryweb worker --concurrency 1`, one task at a time each) are
started on this process's database and Redis (REDIS_URL), a throwaway scope is made, and `clients`
threads send `episodes` texts to it through the web processes in turn (`POST /api/v1/scopes/S/remember`,
offline extraction unless LLM_PROVIDER says otherwise). Timed from the first request until every
episode is done and the scope's search index has caught up (each episode extracted, its fact and
its text indexed), and reported as episodes/s, with the time the requests alone took. The workers
are stopped and the scope deleted after each run. Use a scratch database and a Redis no other
worker consumes. A benchmark, not a test.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

from django.conf import settings
from django.db import connection

from accounts.permissions import Principal
from accounts.tokens import token_issue, token_revoke
from memoryweb.client import MemoryWebClient
from memoryweb.errors import InvalidInput
from memoryweb.providers.embedders import get_embedder
from memories.models import Episode, EpisodeStatus, Scope
from retrieval.bench_api import ROOT, START_TIMEOUT, _server
from retrieval.bench_ingest import scope_delete_throwaway
from retrieval.indexing import index_behind

DRAIN_TIMEOUT = 1800  # seconds for the workers to finish one run
NAMES = ["Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiroshi", "Ines", "Jonas", "Kofi", "Lena"]
CITIES = ["Lisbon", "Porto", "Berlin", "Paris", "Madrid", "Rome", "Vienna", "Prague", "Oslo", "Dublin", "Athens"]


def bench_fleet(*, principal: Principal, workers: list[int], webs: int = 2, episodes: int = 240, clients: int = 8,
                stdout=None) -> dict:
    if not settings.REDIS_URL:
        raise InvalidInput("bench fleet needs a broker: set REDIS_URL (tasks would otherwise run inside the web processes).")
    if not workers or min(workers) < 1 or max(workers) > 32:
        raise InvalidInput("--workers must be numbers from 1 to 32.")
    if not 1 <= webs <= 8 or not 1 <= episodes <= 100_000 or not 1 <= clients <= 64:
        raise InvalidInput("--webs must be 1 to 8, --episodes 1 to 100000 and --clients 1 to 64.")
    out = stdout or sys.stdout
    runs = []
    with ExitStack() as stack:
        urls = [stack.enter_context(_server(workers=1))[0] for _ in range(webs)]
        out.write(f"{webs} web processes up: {', '.join(urls)}\n")
        for count in workers:
            run = _run(principal=principal, urls=urls, workers=count, episodes=episodes, clients=clients)
            runs.append(run)
            out.write(f"{count} worker(s): {episodes} episodes in {run['seconds']} s: {run['episodes_per_second']} episodes/s "
                      f"extracted and indexed (the requests alone: {run['send_seconds']} s)\n")
    return {"webs": webs, "episodes": episodes, "clients": clients, "embedder": get_embedder().name,
            "llm": settings.LLM_PROVIDER, "cores": os.cpu_count(), "runs": runs}


def _run(*, principal: Principal, urls: list[str], workers: int, episodes: int, clients: int) -> dict:
    from accounts.services import personal_team_ensure

    scope = Scope.objects.create(team=personal_team_ensure(user=principal.user), slug=f"bench-fleet-{uuid.uuid4().hex[:8]}",
                                 name="bench fleet scope")
    issued = token_issue(actor=principal, user=principal.user, name=f"bench fleet {scope.slug}", scopes=[scope], can_write=True)
    procs = [_start_worker(n) for n in range(workers)]
    try:
        for proc in procs:
            _wait_ready(proc)
        started = time.perf_counter()
        _send(urls=urls, secret=issued.secret, scope=scope.slug, episodes=episodes, clients=clients)
        sent = time.perf_counter()
        _wait_drained(scope, episodes, procs)
        finished = time.perf_counter()
        failed = Episode.objects.in_scope(scope).filter(status=EpisodeStatus.FAILED).count()
    finally:
        for proc in procs:
            _stop(proc)
        token_revoke(token=issued.token, actor=principal)
        scope_delete_throwaway(scope=scope)
    seconds = finished - started
    return {"workers": workers, "seconds": round(seconds, 2), "send_seconds": round(sent - started, 2),
            "episodes_per_second": round(episodes / seconds, 1), "failed": failed}


def _send(*, urls: list[str], secret: str, scope: str, episodes: int, clients: int) -> None:
    http = [MemoryWebClient(url, secret, timeout=120) for url in urls]
    try:
        def remember(n: int) -> None:
            week = time.strftime("%Y-%m-%d", time.gmtime(1577836800 + 7 * 86400 * (n // len(NAMES))))
            http[n % len(http)].remember(scope, f"I moved to {CITIES[n % len(CITIES)]}", speaker=NAMES[n % len(NAMES)],
                                         occurred_at=week)

        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(remember, range(episodes)))
    finally:
        for client in http:
            client.close()


def _wait_drained(scope: Scope, episodes: int, procs: list[subprocess.Popen]) -> None:
    """Until every episode is done (or failed), the index has caught up and no message waits or is being worked on."""
    import redis

    broker = redis.Redis.from_url(settings.REDIS_URL)
    model = get_embedder().name
    deadline = time.monotonic() + DRAIN_TIMEOUT
    while time.monotonic() < deadline:
        if any(proc.poll() is not None for proc in procs):
            raise InvalidInput(f"a worker exited: {_log(next(p for p in procs if p.poll() is not None))[-2000:]}")
        done = Episode.objects.in_scope(scope).filter(status__in=[EpisodeStatus.DONE, EpisodeStatus.FAILED]).count()
        if (done == episodes and not index_behind(scope=scope, model=model)
                and broker.llen("celery") == 0 and broker.hlen("unacked") == 0):
            return
        time.sleep(0.1)
    raise InvalidInput(f"the workers did not finish within {DRAIN_TIMEOUT} s.")


def _start_worker(number: int) -> subprocess.Popen:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryweb.settings", "EMBEDDER": settings.EMBEDDER,
           "LLM_PROVIDER": settings.LLM_PROVIDER, "MEMORYWEB_HOME": str(settings.MEMORYWEB_HOME),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if settings.DATABASE_EMBEDDED:
        env["MEMORYWEB_DATABASE_NAME"] = connection.settings_dict["NAME"]
    log = tempfile.NamedTemporaryFile("w+", prefix="bench-worker-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memoryweb.cli", "worker", "--concurrency", "1", "--hostname", f"bench{number}-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    proc.log_path = log.name
    log.close()
    return proc


def _wait_ready(proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise InvalidInput(f"memoryweb worker exited with {proc.returncode}: {_log(proc)[-2000:]}")
        if " ready." in _log(proc):
            return
        time.sleep(0.2)
    raise InvalidInput(f"memoryweb worker was not ready within {START_TIMEOUT} s.")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    os.unlink(proc.log_path)


def _log(proc: subprocess.Popen) -> str:
    with open(proc.log_path, errors="replace") as log:
        return log.read()
