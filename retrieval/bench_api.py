"""`memoryweb bench api`: recall and remember through the real server, against recall in-process.

A scope of `facts` synthetic facts (the `bench recall` builders) is built and indexed, or an
existing one reused; a read+write token is issued for it (and revoked at the end). First recall
is timed in this process, wall clock and CPU seconds per recall: this process's (all its
threads) plus the embedded PostgreSQL's (its backends, living and exited). Then `memoryweb
serve --workers N` (serve's default count unless given) starts on a free loopback port, is
warmed up, and for each client count N clients (threads, one keep-alive HTTP connection each)
send `POST /api/v1/scopes/S/recall` for `seconds`, then the same for `remember`. Reported per operation and client count: requests/s,
p50 and p95, errors by status, CPU seconds per request in the server, the database and the
clients, and how many of the cores these three kept busy (the rest went to other programs, or
sat idle).

Two figures answer the issue's targets: what HTTP and auth add to the in-process recall p50 at
one client (after the recall phases, in-process and HTTP recalls in alternating one-second
blocks asking the same questions, so both are timed over the same minutes), and recall throughput at the most clients against the CPU bound, cores ÷ CPU
seconds per in-process recall. The client threads share the machine's cores with the server
(their CPU is reported too). The in-process recall runs with the native thread limit a server
process sets itself (memoryweb/warmup.py), so both sides embed alike, and is timed again after
the server stopped (a shared machine's speed drifts; the targets use the mean of both). The
texts the clients remembered are forgotten before that, so the second in-process run and the
next run on a kept scope measure the same memories. A benchmark, not a test.
"""

import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psutil
from django.conf import settings
from django.db import connection
from django.db.models import Max

from accounts.permissions import Principal
from accounts.tokens import token_issue, token_revoke
from memoryweb.embedded_db import pgdata_path
from memoryweb.errors import InvalidInput
from memoryweb.providers.embedders import get_embedder
from memoryweb.warmup import native_threads_limit
from memories.models import Embedding, Entity, EntityAlias, Episode, Fact, Mention, Scope
from retrieval.bench import _percentile, question_maker, synthetic_facts
from retrieval.bench_ingest import scope_delete_throwaway, synthetic_sessions
from retrieval.forget import episode_forget
from retrieval.indexing import index_pending
from retrieval.models import Posting, SearchDocument, TermStat
from retrieval.services import recall

ROOT = Path(__file__).resolve().parent.parent
MAX_CLIENTS = 256
MAX_SECONDS = 600
START_TIMEOUT = 180  # seconds for `serve` to answer, the local model loaded in each worker
OPERATIONS = ("recall", "remember", "writes")
WRITES_READERS = 4  # recall clients beside the writers of the write-heavy mix ("writes")
PROBE_SECONDS = 0.25  # how often the mix's probe writes a text whose searchable delay is timed
SEARCHABLE_WAIT = 60.0  # seconds a probe may take to become searchable after the phase ended
DRAIN_WAIT = 300.0  # seconds the background may take after a writes phase to extract and index its backlog
WARM_UP_RECALLS = 30  # in-process, before timing
PAIRED_BLOCK_SECONDS = 1.0  # a side's turn in the paired one-client run (`_paired`)
REMEMBER_SPEAKER = "bench"  # who the clients' remembered texts are from (forgotten at the end, `_remembered_forget`)


@dataclass
class Phase:
    operation: str
    clients: int
    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    server_cpu: float | None = None
    db_cpu: float | None = None
    client_cpu: float = 0.0

    def as_dict(self) -> dict:
        done = len(self.latencies_ms)
        per = (lambda cpu: round(cpu / done * 1000, 2) if cpu is not None and done else None)
        used = sum(cpu for cpu in (self.server_cpu, self.db_cpu, self.client_cpu) if cpu is not None)
        return {
            "operation": self.operation, "clients": self.clients, "requests": done, "seconds": round(self.seconds, 2),
            "requests_per_second": round(done / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(statistics.median(self.latencies_ms), 2) if done else None,
            "p95_ms": round(_percentile(self.latencies_ms, 0.95), 2) if done else None,
            "errors": {str(status): count for status, count in sorted(self.errors.items(), key=str)},
            "server_cpu_ms_per_request": per(self.server_cpu), "db_cpu_ms_per_request": per(self.db_cpu),
            "client_cpu_ms_per_request": per(self.client_cpu),
            "cores_busy": round(used / self.seconds, 2) if self.seconds else None,
        }


def bench_api(
    *, principal: Principal, clients: list[int], seconds: float, workers: int | None = None, facts: int = 10_000,
    existing: Scope | None = None, keep: bool = False, queries: int = 200, seed: int = 7, stdout=None,
    operations: tuple[str, ...] = OPERATIONS,
) -> dict:
    if not operations or set(operations) - set(OPERATIONS):
        raise InvalidInput(f"--operations must name some of {', '.join(OPERATIONS)}.")
    if not clients or min(clients) < 1 or max(clients) > MAX_CLIENTS:
        raise InvalidInput(f"--clients must be numbers from 1 to {MAX_CLIENTS}.")
    if not 0 < seconds <= MAX_SECONDS:
        raise InvalidInput(f"--seconds must be more than 0 and at most {MAX_SECONDS}.")
    out = stdout or sys.stdout
    workers = workers or settings.MEMORYWEB_WORKERS  # serve's default
    threads = native_threads_limit()
    rng = random.Random(seed)
    scope = existing or _build(principal=principal, facts=facts, rng=rng, out=out)
    issued = token_issue(actor=principal, user=principal.user, name=f"bench api {uuid.uuid4().hex[:6]}", scopes=[scope], can_write=True)
    try:
        facts_in_scope = Fact.objects.in_scope(scope).count()
        ask = question_maker(scope)
        before = _in_process(scope, ask, queries=queries, rng=rng)
        _in_process_write(before, "in-process recall", out)
        last_episode = Episode.objects.in_scope(scope).aggregate(last=Max("pk"))["last"] or 0
        _backlog_warn(scope, out)
        try:
            with _server(workers=workers) as (url, server):
                phases, paired = _http_phases(url=url, server=server, secret=issued.secret, scope=scope, ask=ask, clients=clients,
                                              seconds=seconds, workers=workers, operations=operations, after=last_episode, out=out)
        finally:
            _remembered_forget(principal=principal, scope=scope, after=last_episode, out=out)
        # Timed again on the same scope: a shared machine's speed drifts over the minutes the
        # server ran, and the targets compare against the mean of both.
        after = _in_process(scope, ask, queries=queries, rng=rng)
        _in_process_write(after, "in-process recall again, after the server", out)
        inprocess = {**_mean(before, after), "before": before, "after": after}
    finally:
        token_revoke(token=issued.token, actor=principal)
        if existing is None and not keep:
            scope_delete_throwaway(scope=scope)
    result = {
        "scope": scope.slug, "facts": facts_in_scope, "workers": workers, "native_threads": threads,
        "embedder": get_embedder().name, "cores": _cores(), "in_process": inprocess, "http": phases, "paired": paired,
        **_targets(inprocess, phases, paired),
    }
    _summary(result, out)
    if keep and existing is None:
        out.write(f"kept: measure again with `memoryweb bench api --scope {scope.slug}`\n")
    return result


def _build(*, principal: Principal, facts: int, rng: random.Random, out) -> Scope:
    from accounts.services import personal_team_ensure

    started = time.perf_counter()
    team = personal_team_ensure(user=principal.user)
    scope = Scope.objects.create(team=team, slug=f"bench-api-{uuid.uuid4().hex[:8]}", name="bench api scope")
    people, made = synthetic_facts(scope, facts=facts, rng=rng)
    index_pending(scope=scope)
    _vacuum()
    out.write(f"scope {scope.slug}: {made} facts about {people} people, indexed ({time.perf_counter() - started:.1f} s)\n")
    return scope


def _vacuum() -> None:
    """VACUUM (ANALYZE) of the tables a built scope filled, before anything is timed: the first
    reads of freshly written rows set their hint bits, and autovacuum would come to the new rows
    during the first timed run, in the PostgreSQL CPU it counts (measured: 162 ms of it per
    in-process recall in the run right after a build, 15 in the next)."""
    tables = [model._meta.db_table for model in (Entity, EntityAlias, Fact, Episode, Mention, Embedding, SearchDocument, Posting, TermStat)]
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM (ANALYZE) {', '.join(map(connection.ops.quote_name, tables))}")


def _in_process(scope: Scope, ask, *, queries: int, rng: random.Random) -> dict:
    """Recall as the API handler calls it (query embedding included), timed and CPU-costed."""
    # Warmed up as the server is before it is timed: the model, the caches, the pool's
    # connections and their backends' first statements (a single recall left the first batch
    # timed 20-25 % dearer than a second one on the same scope).
    for _ in range(WARM_UP_RECALLS):
        recall(scope=scope, query=ask(rng))
    wall, db = [], _Postgres()
    cpu_before, db_before = time.process_time(), db.cpu()
    for _ in range(queries):
        question = ask(rng)
        started = time.perf_counter()
        recall(scope=scope, query=question)
        wall.append((time.perf_counter() - started) * 1000)
    app_cpu = time.process_time() - cpu_before
    db_cpu = db.cpu() - db_before if db_before is not None else None
    total = app_cpu + (db_cpu or 0.0)
    return {
        "queries": queries, "p50_ms": round(statistics.median(wall), 2), "p95_ms": round(_percentile(wall, 0.95), 2),
        "app_cpu_ms_per_recall": round(app_cpu / queries * 1000, 2),
        "db_cpu_ms_per_recall": round(db_cpu / queries * 1000, 2) if db_cpu is not None else None,
        "cpu_ms_per_recall": round(total / queries * 1000, 2),
    }


def _remembered_forget(*, principal: Principal, scope: Scope, after: int, out) -> None:
    """The texts the clients remembered, forgotten again (with their facts and index entries), so
    the in-process recall after the server and the next run on a kept scope recall over the same
    memories: recall over a grown scope costs more, and runs on it would not compare."""
    started = time.perf_counter()
    ids = list(Episode.objects.in_scope(scope).filter(pk__gt=after, speaker=REMEMBER_SPEAKER).values_list("public_id", flat=True))
    for public_id in ids:
        episode_forget(principal=principal, scope=scope, episode_public_id=public_id)
    if ids:
        out.write(f"forgot the {len(ids)} texts the clients remembered ({time.perf_counter() - started:.1f} s)\n")


def _in_process_write(data: dict, label: str, out) -> None:
    out.write(f"{label}, {data['queries']} queries: p50 {data['p50_ms']} ms, p95 {data['p95_ms']} ms, "
              f"CPU {data['cpu_ms_per_recall']} ms per recall ({data['app_cpu_ms_per_recall']} here + "
              f"{data['db_cpu_ms_per_recall']} in PostgreSQL)\n")


def _mean(before: dict, after: dict) -> dict:
    """Each figure of two in-process runs averaged (a figure one of them lacks: the other's)."""
    def mean(key):
        values = [run[key] for run in (before, after) if run[key] is not None]
        return round(sum(values) / len(values), 2) if values else None

    return {"queries": before["queries"], **{key: mean(key) for key in before if key != "queries"}}


def _http_phases(*, url, server, secret, scope, ask, clients, seconds, workers, operations, after, out) -> tuple[list[dict], dict | None]:
    """Each operation at each client count; after the recalls (before any remember grows the
    scope), the paired one-client run (`_paired`)."""
    headers = {"Authorization": f"Bearer {secret}"}
    recall_path = f"/api/v1/scopes/{scope.slug}/recall"
    texts = [m["text"] for _, messages in synthetic_sessions(turns=500, session_size=50) for m in messages]

    def recall_request(rng):
        return recall_path, {"query": ask(rng)}

    def remember_request(rng):
        return f"/api/v1/scopes/{scope.slug}/remember", {"text": rng.choice(texts), "speaker": REMEMBER_SPEAKER}

    # Every worker loads its model and opens its connections before anything is timed.
    _drive(url, headers, recall_request, clients=max(2 * workers, 2), seconds=max(3.0, min(seconds, 10.0)), server=server)
    phases, paired = [], None
    for operation, make in (("recall", recall_request), ("remember", remember_request)):
        if operation not in operations:
            continue
        if operation == "remember":
            _drained(scope, out, after=after)
        if operation == "remember" and "recall" in operations:
            paired = _paired(url=url, secret=secret, scope=scope, ask=ask, seconds=seconds, out=out)
        for count in clients:
            phase = _drive(url, headers, make, clients=count, seconds=seconds, server=server)
            phase.operation = operation
            data = phase.as_dict()
            phases.append(data)
            out.write(f"{operation:8} {count:3} clients: {data['requests_per_second']:7} req/s, p50 {data['p50_ms']} ms, "
                      f"p95 {data['p95_ms']} ms, CPU ms/request: server {data['server_cpu_ms_per_request']} + db "
                      f"{data['db_cpu_ms_per_request']} + clients {data['client_cpu_ms_per_request']}, "
                      f"{data['cores_busy']} cores busy{', errors ' + str(data['errors']) if data['errors'] else ''}\n")
    if paired is None and "recall" in operations:
        paired = _paired(url=url, secret=secret, scope=scope, ask=ask, seconds=seconds, out=out)
    if "writes" in operations:
        phases += _writes(url=url, headers=headers, server=server, scope=scope, recall_request=recall_request,
                          remember_request=remember_request, clients=clients, seconds=seconds, after=after, out=out)
    return phases, paired


def _writes(*, url, headers, server, scope, recall_request, remember_request, clients, seconds, after, out) -> list[dict]:
    """The write-heavy mix: for each client count N, N clients remember into the one scope while
    WRITES_READERS clients recall from it, and a probe remembers a text every PROBE_SECONDS and
    times how long after its acknowledgement the episode is searchable (polled in this process,
    `episodes_searchable`). Before it, the readers alone (the quiet figure); after each count, the
    time the background took to extract and index the backlog. CPU per request in a `writes` row
    is the whole machine's during the phase (the readers' and the probe's included)."""
    _drained(scope, out, after=after)
    quiet = _drive(url, headers, recall_request, clients=WRITES_READERS, seconds=seconds, server=server).as_dict()
    quiet["operation"] = "recall_quiet"
    out.write(f"recall   {WRITES_READERS:3} clients, quiet: p50 {quiet['p50_ms']} ms, p95 {quiet['p95_ms']} ms\n")
    phases = [quiet]
    for count in clients:
        with ThreadPoolExecutor(3) as pool:
            reading = pool.submit(_drive, url, headers, recall_request, clients=WRITES_READERS, seconds=seconds, server=server)
            probing = pool.submit(_probe, url, headers, remember_request, scope=scope, seconds=seconds)
            writes = _drive(url, headers, remember_request, clients=count, seconds=seconds, server=server).as_dict()
            readers, delays = reading.result().as_dict(), probing.result()
        drained = _drained(scope, out, after=after)
        writes.update(operation="writes", readers=WRITES_READERS, recall_p50_ms=readers["p50_ms"], recall_p95_ms=readers["p95_ms"],
                      recall_per_second=readers["requests_per_second"], recall_errors=readers["errors"],
                      recall_quiet_p95_ms=quiet["p95_ms"], searchable=delays, drain_seconds=drained)
        phases.append(writes)
        out.write(f"writes   {count:3} clients: {writes['requests_per_second']:7} remember/s, p50 {writes['p50_ms']} ms, "
                  f"p95 {writes['p95_ms']} ms; recall at {WRITES_READERS} readers p95 {readers['p95_ms']} ms (quiet "
                  f"{quiet['p95_ms']}); write→searchable p50 {delays['p50_s']} s, p95 {delays['p95_s']} s over "
                  f"{delays['probes']} probes{', never ' + str(delays['never']) if delays['never'] else ''}; "
                  f"backlog done {drained} s after; {writes['cores_busy']} cores busy"
                  f"{', errors ' + str(writes['errors']) if writes['errors'] else ''}\n")
    return phases


def _probe(url, headers, remember_request, *, scope: Scope, seconds: float) -> dict:
    """Remember a text every PROBE_SECONDS for `seconds`; for each, the seconds from its
    acknowledgement until it is searchable (at most SEARCHABLE_WAIT after the phase)."""
    from retrieval.indexing import episodes_searchable

    http = _Connection(url, headers)
    acked: dict[str, float] = {}
    delays: list[float] = []
    rng = random.Random(-1)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            path, body = remember_request(rng)
            status, data = http.post_json(path, body)
            if status == 202:
                acked[data["episodes"][0]["episode_id"]] = time.monotonic()
            found_by = time.monotonic() + PROBE_SECONDS
            while time.monotonic() < found_by:
                _probes_found(scope, acked, delays, episodes_searchable)
                time.sleep(0.02)
        wait_until = time.monotonic() + SEARCHABLE_WAIT
        while acked and time.monotonic() < wait_until:
            _probes_found(scope, acked, delays, episodes_searchable)
            time.sleep(0.02)
    finally:
        http.close()
        connection.close()  # this thread's connection
    return {
        "probes": len(delays) + len(acked), "never": len(acked),
        "p50_s": round(statistics.median(delays), 3) if delays else None,
        "p95_s": round(_percentile(delays, 0.95), 3) if delays else None,
        "max_s": round(max(delays), 3) if delays else None,
    }


def _probes_found(scope: Scope, acked: dict[str, float], delays: list[float], searchable) -> None:
    if not acked:
        return
    now = time.monotonic()
    for episode_id in searchable(scope=scope, episode_ids=list(acked)):
        delays.append(now - acked.pop(str(episode_id)))


def _backlog_warn(scope: Scope, out) -> None:
    """Say so when the scope holds episodes waiting for extraction before anything is sent (a
    `bench recall --keep` conversation is ingested without it): the server's background works on
    them during every phase, and the figures include that work."""
    waiting = _unfinished(scope).count()
    if waiting:
        out.write(f"note: {waiting} episodes of {scope.slug} wait for extraction; the server extracts them during the phases, "
                  "which the figures include (only the benchmark's own writes are waited for)\n")


def _unfinished(scope: Scope, *, after: int = 0):
    """The scope's episodes above `after` that wait for extraction or are being extracted."""
    from memories.models import EpisodeStatus

    return Episode.objects.in_scope(scope).filter(pk__gt=after, status__in=[EpisodeStatus.PENDING, EpisodeStatus.PROCESSING])


def _drained(scope: Scope, out, *, after: int = 0) -> float | None:
    """Seconds until the scope has no episode above `after` (those the benchmark wrote) pending or
    processing and its index has caught up (the server's background work after a write phase);
    None if not within DRAIN_WAIT."""
    from retrieval.indexing import index_behind

    started = time.monotonic()
    model = get_embedder().name
    while time.monotonic() - started < DRAIN_WAIT:
        busy = _unfinished(scope, after=after).exists()
        if not busy and not index_behind(scope=scope, model=model):
            return round(time.monotonic() - started, 1)
        time.sleep(0.2)
    out.write(f"the background had not caught up {DRAIN_WAIT:g} s after the writes\n")
    return None


def _paired(*, url: str, secret: str, scope: Scope, ask, seconds: float, out) -> dict:
    """Recall in this process and over HTTP at one client, in alternating blocks of
    `PAIRED_BLOCK_SECONDS`, `seconds` of each in all, each block's pair asking the same questions
    (which side goes first alternates too): the p50s compared were timed over the same minutes, so
    the machine's drift (runs apart in time have differed by 7 ms at p50) moves both alike. The
    server is idle while this process recalls, and the other way round."""
    http = _Connection(url, {"Authorization": f"Bearer {secret}"})
    path = f"/api/v1/scopes/{scope.slug}/recall"
    local, remote = [], []

    def in_process(question):
        recall(scope=scope, query=question)
        return 200

    def over_http(question):
        return http.post(path, {"query": question})

    try:
        for block in range(max(2, round(seconds / PAIRED_BLOCK_SECONDS))):
            sides = [(local, in_process), (remote, over_http)]
            for latencies, send in sides if block % 2 == 0 else sides[::-1]:
                rng, deadline = random.Random(block), time.monotonic() + PAIRED_BLOCK_SECONDS
                while time.monotonic() < deadline:
                    question = ask(rng)
                    started = time.perf_counter()
                    status = send(question)
                    if status != 200:
                        raise InvalidInput(f"recall over HTTP answered {status} during the paired run.")
                    latencies.append((time.perf_counter() - started) * 1000)
    finally:
        http.close()
    result = {
        "blocks": max(2, round(seconds / PAIRED_BLOCK_SECONDS)), "block_seconds": PAIRED_BLOCK_SECONDS,
        "in_process_p50_ms": round(statistics.median(local), 2), "http_p50_ms": round(statistics.median(remote), 2),
        "in_process_recalls": len(local), "http_recalls": len(remote),
    }
    out.write(f"paired at 1 client ({result['blocks']} alternating blocks of {PAIRED_BLOCK_SECONDS:g} s a side): in-process "
              f"p50 {result['in_process_p50_ms']} ms over {len(local)} recalls, HTTP p50 {result['http_p50_ms']} ms over "
              f"{len(remote)}\n")
    return result


def _drive(url: str, headers: dict, make, *, clients: int, seconds: float, server: psutil.Process) -> Phase:
    """`clients` threads, each on its own keep-alive connection, sending requests for `seconds`."""
    phase = Phase(operation="", clients=clients, seconds=0.0)
    lock = threading.Lock()
    db = _Postgres()
    deadline = time.monotonic() + seconds

    def client(number: int) -> None:
        rng = random.Random(number)
        latencies, errors = [], Counter()
        http = _Connection(url, headers)
        try:
            while time.monotonic() < deadline:
                path, body = make(rng)
                started = time.perf_counter()
                status = http.post(path, body)
                if status in (200, 202):
                    latencies.append((time.perf_counter() - started) * 1000)
                else:
                    errors[status] += 1
        finally:
            http.close()
        with lock:
            phase.latencies_ms.extend(latencies)
            phase.errors.update(errors)

    server_before, db_before, client_before = _tree_cpu(server), db.cpu(), time.process_time()
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    phase.seconds = time.perf_counter() - started
    phase.client_cpu = time.process_time() - client_before
    phase.server_cpu = _tree_cpu(server) - server_before
    phase.db_cpu = db.cpu() - db_before if db_before is not None else None
    return phase


class _Connection:
    """One keep-alive HTTP/1.1 connection (the standard library's), reopened after a failure.

    The clients share the cores with the server, so the load they add is kept small: about half
    a millisecond of CPU per request (0.5-0.6 measured) where httpx's client took 1.5 to 2.8."""

    def __init__(self, url: str, headers: dict):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.headers = {**headers, "Content-Type": "application/json"}
        self.http: http.client.HTTPConnection | None = None

    def post(self, path: str, body: dict) -> int | str:
        """The response's status, or the name of the error that left no response."""
        return self._send(path, body)[0]

    def post_json(self, path: str, body: dict) -> tuple[int | str, dict | None]:
        """Like `post`, with the response's JSON body (None after an error)."""
        status, raw = self._send(path, body)
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, None

    def _send(self, path: str, body: dict) -> tuple[int | str, bytes]:
        if self.http is None:
            self.http = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            self.http.request("POST", path, body=json.dumps(body).encode(), headers=self.headers)
            response = self.http.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            return exc.__class__.__name__, b""

    def close(self) -> None:
        if self.http is not None:
            self.http.close()
            self.http = None


class _server:
    """`memoryweb serve` on a free loopback port, with this process's database and embedder, and
    a rate limit no benchmark reaches; stopped (with its workers) on exit."""

    def __init__(self, *, workers: int):
        self.workers = workers

    def __enter__(self) -> tuple[str, psutil.Process]:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryweb.settings", "MEMORYWEB_API_RATE": "1000000/m",
               "EMBEDDER": settings.EMBEDDER, "LLM_PROVIDER": settings.LLM_PROVIDER,
               "MEMORYWEB_HOME": str(settings.MEMORYWEB_HOME), "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        if settings.DATABASE_EMBEDDED:  # the database this process uses (a test's, too)
            env["MEMORYWEB_DATABASE_NAME"] = connection.settings_dict["NAME"]
        self.log = tempfile.TemporaryFile()  # uvicorn logs every request: a pipe nobody reads would fill
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memoryweb.cli", "serve", "--port", str(port), "--workers", str(self.workers), "--no-migrate"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                error = self.log.read().decode(errors="replace")[-2000:]
                self.log.close()
                raise InvalidInput(f"memoryweb serve exited with {self.proc.returncode}: {error}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    return url, psutil.Process(self.proc.pid)
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        self.__exit__(None, None, None)
        raise InvalidInput(f"memoryweb serve did not answer within {START_TIMEOUT} s.")

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()


class _Postgres:
    """CPU seconds of the embedded PostgreSQL: the postmaster, its living backends, and the
    backends that exited (counted in the postmaster's children times). None with DATABASE_URL."""

    def __init__(self):
        self.postmaster = None
        if settings.DATABASE_EMBEDDED:
            try:
                pid = int((pgdata_path(settings.MEMORYWEB_HOME) / "postmaster.pid").read_text().split()[0])
                self.postmaster = psutil.Process(pid)
            except (OSError, ValueError, IndexError, psutil.Error):
                self.postmaster = None

    def cpu(self) -> float | None:
        if self.postmaster is None:
            return None
        times = self.postmaster.cpu_times()
        return times.user + times.system + times.children_user + times.children_system + _children_cpu(self.postmaster)


def _tree_cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system + _children_cpu(process)


def _children_cpu(process: psutil.Process) -> float:
    total = 0.0
    for child in process.children(recursive=True):
        try:
            times = child.cpu_times()
            total += times.user + times.system
        except psutil.Error:  # it exited meanwhile
            pass
    return total


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _targets(inprocess: dict, phases: list[dict], paired: dict | None = None) -> dict:
    """The issue's two figures, and what explains the second: the CPU one recall over HTTP
    costs (server, database and the clients, which share the cores) and how many cores the
    benchmark had (a loaded machine gives the server less than all of them). What HTTP adds at
    one client comes from the paired run when there is one (both sides timed over the same
    minutes); the unpaired difference (the one-client phase against the in-process runs before
    and after the server) is kept beside it."""
    recalls = [p for p in phases if p["operation"] == "recall" and p["p50_ms"] is not None]
    if not recalls:
        return {}
    one, most = min(recalls, key=lambda p: p["clients"]), max(recalls, key=lambda p: p["clients"])
    bound = _cores() / (inprocess["cpu_ms_per_recall"] / 1000) if inprocess["cpu_ms_per_recall"] else None
    http_cpu = _sum(most["server_cpu_ms_per_request"], most["db_cpu_ms_per_request"], most["client_cpu_ms_per_request"])
    return {
        "added_ms_at_one_client": round(paired["http_p50_ms"] - paired["in_process_p50_ms"], 2) if paired
        else round(one["p50_ms"] - inprocess["p50_ms"], 2),
        "added_ms_unpaired": round(one["p50_ms"] - inprocess["p50_ms"], 2), "added_at_clients": 1 if paired else one["clients"],
        "throughput_at_most_clients": most["requests_per_second"], "most_clients": most["clients"],
        "cpu_bound_requests_per_second": round(bound, 1) if bound else None,
        "share_of_cpu_bound": round(most["requests_per_second"] / bound, 3) if bound else None,
        "http_cpu_ms_per_recall": http_cpu, "cores_busy_at_most_clients": most["cores_busy"],
        # All the cores for the benchmark: the throughput its CPU per request allows, against the bound.
        "share_of_cpu_bound_on_idle_cores": round(inprocess["cpu_ms_per_recall"] / http_cpu, 3) if http_cpu else None,
    }


def _summary(result: dict, out) -> None:
    if "added_ms_at_one_client" not in result:
        return
    share = result["share_of_cpu_bound"]
    idle = result["share_of_cpu_bound_on_idle_cores"]
    paired = result.get("paired")
    base = paired["in_process_p50_ms"] if paired else result["in_process"]["p50_ms"]
    how = "timed in alternating blocks" if paired else "against the runs before and after the server"
    out.write(
        f"HTTP and auth add {result['added_ms_at_one_client']} ms to the in-process recall p50 "
        f"({base} ms, {how}) at {result['added_at_clients']} client(s); at {result['most_clients']} clients "
        f"recall reaches {result['throughput_at_most_clients']} req/s against the CPU bound {result['cores']} cores ÷ "
        f"{result['in_process']['cpu_ms_per_recall']} ms = {result['cpu_bound_requests_per_second']} req/s: "
        f"{round(100 * share, 1) if share is not None else '?'} %, with {result['cores_busy_at_most_clients']} of "
        f"{result['cores']} cores busy for it; a recall over HTTP costs {result['http_cpu_ms_per_recall']} ms of CPU "
        f"(server, database and clients), so all the cores would give "
        f"{round(100 * idle, 1) if idle is not None else '?'} % of the bound\n"
    )


def _sum(*values):
    return round(sum(v for v in values if v is not None), 2)
