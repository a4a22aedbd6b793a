"""memoryweb as a fleet: two web processes (`memoryweb serve`) and two workers (`memoryweb worker`)
on one PostgreSQL (pytest's test database on the embedded server, which every process reaches
through MEMORYWEB_HOME) and the machine's Redis. Episodes sent over the HTTP API through both
web processes are each extracted exactly once and indexed exactly once, and nothing is left
pending; a worker killed while it holds an episode leaves it to the other, which finishes it once
the broker hands the unacknowledged message out again. And `memoryweb worker` / `beat` refuse to
start without a broker, and beat schedules through Redis."""

import json
import os
import signal
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest
import redis
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from memoryweb.client import MemoryWebClient
from memoryweb.providers.embedders import get_embedder
from memories.models import Episode, EpisodeStatus, Scope
from retrieval.indexing import index_behind
from tests.integration.checks import extracted_and_indexed_once, move
from tests.integration.mcp_world import live_server, memoryweb_command, world_flush
from tests.integration.workers import (
    ROOT, flush_redis, start_worker, stop_worker, wait_for, wait_until_ready, worker_env, worker_log,
)

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db]

EPISODES = 240
SESSION_TURNS = 10
# Every process of the fleet runs with these. Redis hands a message a dead worker took to another
# worker after the visibility timeout, and each worker sweeps for such messages every second; the
# settings refuse a visibility timeout not above the stale-claim window and the time limits (the
# solo pool does not enforce time limits: no extraction here is cut short on a loaded machine; and
# no task here runs for anything like 10 s, after which its message would be handed out again).
FLEET_ENV = {
    "LLM_PROVIDER": "offline", "EMBEDDER": "hash", "DB_CONN_MAX_AGE": "60",  # as docker-compose's workers
    "CELERY_VISIBILITY_TIMEOUT": "10", "CELERY_UNACKED_RESTORE_SECONDS": "1",
    "MEMORYWEB_EXTRACT_STALE_SECONDS": "9", "MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT": "7", "MEMORYWEB_EXTRACT_TIME_LIMIT": "8",
    "MEMORYWEB_INDEX_SOFT_TIME_LIMIT": "7", "MEMORYWEB_INDEX_TIME_LIMIT": "8",
}
WEB_ENV = {"MEMORYWEB_WARM_UP": "0", "MEMORYWEB_LOCAL_ACCESS": "false", "MEMORYWEB_API_RATE": "1000000/m"}
# Bounds for every wait: a stuck fleet fails the test instead of hanging the suite.
START_TIMEOUT = 90
DRAIN_TIMEOUT = 120


@dataclass
class Fleet:
    redis_url: str
    database: str
    scope_id: int
    token: str
    urls: list[str]
    workers: dict = field(default_factory=dict)  # name -> Popen


@pytest.fixture(scope="module")
def fleet(django_db_setup, django_db_blocker, redis_url, tmp_path_factory):
    """Two `memoryweb serve` processes on free ports and two solo workers, sharing the test
    database and Redis; the scope `fleet`, with a write token of its owner."""
    from accounts.permissions import Principal
    from accounts.services import team_create, user_create
    from accounts.tokens import token_issue

    flush_redis(redis_url)
    with django_db_blocker.unblock():
        database = connection.settings_dict["NAME"]
        assert database.startswith("test_"), f"refusing to run the fleet on database {database!r}"
        owner = user_create(username="fleet-owner", password=None)
        team = team_create(actor=None, slug="fleet-team", owner=owner)
        scope = Scope.objects.create(team=team, slug="fleet", name="Fleet")
        token = token_issue(actor=Principal(user=owner), user=owner, name="fleet", scopes=[scope], can_write=True).secret
    env = {**worker_env(redis_url, database, **FLEET_ENV), **WEB_ENV}
    workers = {name: start_worker(redis_url, database_name=database, hostname=f"{name}@%h", **FLEET_ENV) for name in ("w1", "w2")}
    try:
        with ExitStack() as stack, ThreadPoolExecutor(2) as pool:  # both, while the workers start
            log_dirs = [tmp_path_factory.mktemp(f"web{n}") for n in (1, 2)]
            urls = list(pool.map(lambda log_dir: stack.enter_context(live_server(env, log_dir)), log_dirs))
            for proc in workers.values():
                wait_until_ready(proc, timeout=START_TIMEOUT)
            yield Fleet(redis_url, database, scope.pk, token, urls, workers)
    finally:
        for proc in workers.values():
            stop_worker(proc, kill=True)
        flush_redis(redis_url)
        with django_db_blocker.unblock():
            world_flush()


def test_worker_and_beat_refuse_to_start_without_a_broker(settings):
    settings.REDIS_URL = ""
    for program in ("worker", "beat"):
        with pytest.raises(CommandError) as refused:
            call_command(program)
        assert refused.value.returncode == 2 and "REDIS_URL is not set" in str(refused.value)
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    for program in ("worker", "beat"):
        with pytest.raises(CommandError) as refused:
            call_command(program)
        assert refused.value.returncode == 1 and str(refused.value).startswith("Redis at redis://127.0.0.1:1/0 is unreachable")


def test_beat_sends_the_periodic_tasks_through_redis(redis_url, tmp_path):
    """`memoryweb beat` with healing every second: its messages land on the queue (no worker
    takes them here), and it keeps its schedule in the file given. On a Redis database of its own,
    so the fleet's workers never see them."""
    beat_url = _other_database(redis_url)
    flush_redis(beat_url)
    schedule = tmp_path / "beat" / "schedule"
    env = worker_env(beat_url, **FLEET_ENV, MEMORYWEB_HEAL_INTERVAL_SECONDS="1")
    with open(tmp_path / "beat.log", "w") as log:
        beat = subprocess.Popen(memoryweb_command("beat", "--schedule", str(schedule)), cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    broker = redis.Redis.from_url(beat_url)
    try:
        wait_for(lambda: beat.poll() is not None or broker.llen("celery") >= 2, timeout=START_TIMEOUT)
    finally:
        os.killpg(beat.pid, signal.SIGTERM)
        beat.wait(timeout=30)
        tasks = [json.loads(m)["headers"]["task"] for m in broker.lrange("celery", 0, -1)]
        flush_redis(beat_url)
    assert set(tasks) == {"retrieval.heal"}, (tmp_path / "beat.log").read_text()
    assert list(schedule.parent.iterdir()), "beat kept no schedule file"


def test_two_web_processes_and_two_workers_process_every_episode_exactly_once(fleet):
    sent = _send(fleet, 0, EPISODES)
    _wait_until_idle(fleet, sent)

    episodes = list(Episode.objects.filter(public_id__in=sent).values_list("pk", "status", "attempts", "error"))
    assert len(episodes) == EPISODES
    assert Counter((status, attempts) for _, status, attempts, _ in episodes) == {(EpisodeStatus.DONE, 1): EPISODES}, \
        [e for e in episodes if e[1:3] != (EpisodeStatus.DONE, 1)][:5]
    extracted_and_indexed_once(fleet.scope_id, [pk for pk, *_ in episodes])
    for name, proc in fleet.workers.items():  # both took their share
        assert worker_log(proc).count("memories.extract_episode[") > 0, f"{name} extracted nothing"


def test_a_worker_killed_while_it_holds_an_episode_leaves_it_to_the_other(fleet):
    """w2 is replaced by a worker that sleeps after each claim (the test hook
    MEMORYWEB_TEST_EXTRACT_DELAY). w1 is frozen (SIGSTOP) while the episodes are sent, so the
    doomed worker surely takes one; it is killed (SIGKILL) holding it, and w1, thawed, does the
    rest and, once Redis hands the unacknowledged message out again, that one too."""
    _wait_until_idle(fleet, [])
    stop_worker(fleet.workers.pop("w2"))
    doomed = fleet.workers["doomed"] = start_worker(fleet.redis_url, database_name=fleet.database, hostname="doomed@%h",
                                                    MEMORYWEB_TEST_EXTRACT_DELAY="600", **FLEET_ENV)
    wait_until_ready(doomed, timeout=START_TIMEOUT)
    survivor = fleet.workers["w1"]
    os.killpg(survivor.pid, signal.SIGSTOP)
    try:
        sent = _send(fleet, EPISODES, 12)
        held = wait_for(lambda: Episode.objects.filter(public_id__in=sent, status=EpisodeStatus.PROCESSING).first(), timeout=60)
    finally:
        os.killpg(survivor.pid, signal.SIGCONT)
    doomed_log = stop_worker(doomed, kill=True)
    del fleet.workers["doomed"]
    assert (held.attempts, f"memories.extract_episode[{held.claim_id}] received" in doomed_log) == (1, True), doomed_log

    _wait_until_idle(fleet, sent)
    episodes = {pk: (status, attempts) for pk, status, attempts in
                Episode.objects.filter(public_id__in=sent).values_list("pk", "status", "attempts")}
    # The held one was claimed twice (by the doomed worker, then by w1 under the same task id), the others once.
    assert episodes == {pk: (EpisodeStatus.DONE, 2 if pk == held.pk else 1) for pk in episodes}
    assert f"memories.extract_episode[{held.claim_id}] succeeded" in worker_log(survivor)
    extracted_and_indexed_once(fleet.scope_id, list(Episode.objects.filter(scope_id=fleet.scope_id).values_list("pk", flat=True)))


def _send(fleet: Fleet, first: int, count: int) -> list[str]:
    """Episodes first … first+count-1 through the web processes in turn, eight requests at a time:
    the first half one `POST /api/v1/scopes/fleet/remember` each, the rest as conversations of
    SESSION_TURNS turns (`POST …/sessions`, one episode per turn). Their public ids."""
    remembered = count // 2
    requests = [[move(n)] for n in range(first, first + remembered)]
    requests += [[move(n) for n in range(start, min(start + SESSION_TURNS, first + count))]
                 for start in range(first + remembered, first + count, SESSION_TURNS)]
    clients = [MemoryWebClient(url, fleet.token, timeout=60) for url in fleet.urls]
    try:
        def send(numbered):
            n, moves = numbered
            client = clients[n % len(clients)]
            if n < remembered:
                stored = client.remember("fleet", moves[0]["text"], speaker=moves[0]["speaker"], occurred_at=moves[0]["occurred_at"])
            else:
                stored = client.ingest_session("fleet", f"conversation-{moves[0]['id']}", moves)
            return [e.episode_id for e in stored.episodes]

        with ThreadPoolExecutor(8) as pool:
            ids = [i for stored in pool.map(send, enumerate(requests)) for i in stored]
    finally:
        for client in clients:
            client.close()
    assert len(set(ids)) == count
    return ids


def _wait_until_idle(fleet: Fleet, sent: list[str]) -> None:
    """Until every sent episode is done, the scope's index has caught up, and Redis holds no
    message, neither queued nor taken and unacknowledged."""
    broker = redis.Redis.from_url(fleet.redis_url)
    scope = Scope.objects.get(pk=fleet.scope_id)
    model = get_embedder().name

    def idle():
        return (Episode.objects.filter(public_id__in=sent, status=EpisodeStatus.DONE).count() == len(sent)
                and not Episode.objects.filter(scope=scope).exclude(status=EpisodeStatus.DONE).exists()
                and broker.llen("celery") == 0 and broker.hlen("unacked") == 0
                and not index_behind(scope=scope, model=model))

    try:
        wait_for(idle, timeout=DRAIN_TIMEOUT)
    except TimeoutError:
        states = Counter(Episode.objects.filter(scope=scope).values_list("status", flat=True))
        logs = "\n".join(f"--- {name}\n{worker_log(proc)[-3000:]}" for name, proc in fleet.workers.items())
        pytest.fail(f"the fleet did not drain in {DRAIN_TIMEOUT} s: episodes {dict(states)}, queued {broker.llen('celery')}, "
                    f"unacknowledged {broker.hlen('unacked')}\n{logs}")


def _other_database(url: str) -> str:
    """The same Redis with the next database number (15 wraps to 14)."""
    parsed = urlparse(url)
    number = int(parsed.path.lstrip("/") or 0)
    return parsed._replace(path=f"/{number + 1 if number < 15 else 14}").geturl()
