"""A server's own background work when there is no broker: writes never wait for extraction or
indexing.

Without REDIS_URL Celery runs tasks in the caller, so a `remember` would extract its episode and
sweep its scope's index inside the request, and writers of one scope would queue behind that
scope's indexing lock. A server process (asgi.py's lifespan, wsgi.py) instead starts one
`Runner`: `memoryweb.queue.defer_to` sends it the two deferrable tasks, and a request is answered
once its raw rows are committed. The runner has two threads, each with its own connection:

- the indexer keeps a set of scopes announced since its last run; it takes the set whole and runs
  one full sweep per scope (`index_if_free`), which absorbs every row committed before it started.
  A scope another process (or recall's catch-up) is indexing is not waited for: it goes back into
  the set and is tried again shortly, since that run may have started before our rows committed.
- the extractor keeps the episode ids announced and claims them in batches with one UPDATE over a
  `FOR UPDATE SKIP LOCKED` subselect of those still pending (`claim_id` "bg-<key>", `attempts` + 1),
  then extracts them one by one; extraction's own `queue_index` announces the scope to the indexer.

Across a server's worker processes (and servers) everything is coordinated through the database:
the index sweeps by the scope's advisory try-lock, claims by the row locks and the status. Nothing
is lost when a process dies mid-batch. Each runner holds a session advisory lock on its own key
(namespace RUNNER_LOCKS) for as long as its extractor's connection lives; a claim "bg-<key>" whose
lock nobody holds belongs to a dead runner, and every runner's periodic sweep (every
MEMORYWEB_BACKGROUND_SWEEP_SECONDS) takes such claims over at once instead of waiting for the
stale window. The same sweep runs healing (`retrieval.heal.heal`, as Celery beat does with a
broker), whose messages come to this runner: episodes pending too long (announced to a process
that died before claiming them), entity vectors missing, scopes whose index is behind. Extraction is idempotent and writes in one transaction
that re-checks the episode is not done; documents and vectors are unique per target: a batch done
again writes nothing twice.
"""

import logging
import random
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from memoryweb import queue
from memoryweb.providers.embedders import get_embedder
from memories.models import Episode, EpisodeStatus, Scope
from memories.services.extract import MAX_RETRIES, TransientExtractionError, episode_extract, extract_test_delay
from retrieval.embedder import scope_model
from retrieval.heal import heal
from retrieval.indexing import index_behind, index_if_free

logger = logging.getLogger("memoryweb.background")

RUNNER_LOCKS = 0x52554E52  # "RUNR": advisory lock namespace, second key the runner's
CLAIM_PREFIX = "bg-"
# Episodes claimed in one UPDATE; the rest of what was announced waits for the next batch.
EXTRACT_BATCH = 32
# A scope whose lock another run holds is tried again after this long.
LOCKED_RETRY_SECONDS = 0.2
# An extraction that failed for a passing reason is claimed again after this long (a deadlock
# between two extractions of one scope passes at once; a model that is down is not waited out here).
RETRY_SECONDS = (0.5, 2.0)
# After an error the thread waits this long before it tries again (a database restarting).
ERROR_PAUSE_SECONDS = 1.0

_runner: "Runner | None" = None
_start_lock = threading.Lock()


def background_start() -> "Runner | None":
    """Start this process's runner (once) and send it the deferrable tasks, unless a broker is
    configured (its workers do the work) or MEMORYWEB_BACKGROUND is false."""
    global _runner
    if settings.REDIS_URL or not settings.MEMORYWEB_BACKGROUND:
        return None
    with _start_lock:
        if _runner is None:
            _runner = Runner()
            _runner.start()
            queue.defer_to(_runner.announce)
    return _runner


def background_stop() -> None:
    """Stop this process's runner (after its current batch) and run tasks in the caller again."""
    global _runner
    with _start_lock:
        if _runner is not None:
            queue.defer_to(None)
            _runner.stop()
            _runner = None


class Runner:
    def __init__(self) -> None:
        self.key = random.randint(1, 2**31 - 1)
        self.claim_id = f"{CLAIM_PREFIX}{self.key}"
        self._guard = threading.Lock()
        self._scopes: set[int] = set()
        self._episodes: set[int] = set()
        self._index_wake = threading.Event()
        self._extract_wake = threading.Event()
        self._stopping = threading.Event()
        self._locked_backend: int | None = None
        self._next_heal = 0.0
        self._threads = [
            threading.Thread(target=self._loop, args=(self._index_wake, self._index_round), name="memoryweb-indexer", daemon=True),
            threading.Thread(target=self._loop, args=(self._extract_wake, self._extract_round), name="memoryweb-extractor", daemon=True),
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stopping.set()
        self._index_wake.set()
        self._extract_wake.set()
        for thread in self._threads:
            thread.join(timeout)

    def announce(self, name: str, args: tuple) -> None:
        """`memoryweb.queue`'s handler: remember what to do and wake the thread that does it."""
        with self._guard:
            if name == "retrieval.index_scope":
                self._scopes.add(int(args[0]))
                self._index_wake.set()
            else:
                self._episodes.add(int(args[0]))
                self._extract_wake.set()

    # The threads.

    def _loop(self, wake: threading.Event, one_round) -> None:
        next_sweep = 0.0  # at once: work left by a process that died before this one started
        while not self._stopping.is_set():
            sweep = time.monotonic() >= next_sweep
            if sweep:
                next_sweep = time.monotonic() + settings.MEMORYWEB_BACKGROUND_SWEEP_SECONDS
            try:
                again = one_round(sweep=sweep)
            except Exception:
                logger.exception("Background work failed; trying again")
                connection.close()  # a broken connection is opened afresh on the next round (and the liveness lock taken again)
                again = False
                self._stopping.wait(ERROR_PAUSE_SECONDS)
            if not again:
                wake.wait(max(0.0, next_sweep - time.monotonic()))
                wake.clear()
        connection.close()

    def _index_round(self, *, sweep: bool) -> bool:
        """One full sweep of each scope announced; True when some are left for another round."""
        if sweep:  # a scope announced to a process that died before indexing it
            for scope in Scope.objects.order_by("id"):
                if index_behind(scope=scope, model=scope_model(scope) or get_embedder().name):
                    self.announce("retrieval.index_scope", (scope.pk,))
        with self._guard:
            scope_ids, self._scopes = self._scopes, set()
            self._index_wake.clear()
        locked_elsewhere = set()
        for scope in Scope.objects.filter(pk__in=scope_ids).order_by("id"):
            try:
                if index_if_free(scope=scope) is None:
                    locked_elsewhere.add(scope.pk)
            except Exception:
                with self._guard:
                    self._scopes.add(scope.pk)  # tried again on the next round, after the pause
                raise
        if locked_elsewhere:
            with self._guard:
                self._scopes |= locked_elsewhere
            self._stopping.wait(LOCKED_RETRY_SECONDS)
            return True
        with self._guard:
            return bool(self._scopes)

    def _extract_round(self, *, sweep: bool) -> bool:
        """Claim a batch of the episodes announced and extract them; True when more are waiting."""
        self._hold_liveness_lock()
        if sweep:
            self._take_over_dead_claims()
            self._adopt_waiting()
            if time.monotonic() >= self._next_heal:
                self._next_heal = time.monotonic() + settings.MEMORYWEB_HEAL_INTERVAL_SECONDS
                heal()  # as Celery beat does with a broker; its messages come to this runner
        with self._guard:
            wanted = sorted(self._episodes)[:EXTRACT_BATCH]
            self._episodes.difference_update(wanted)
            self._extract_wake.clear()
        for pk in self._claim(wanted):
            self._extract(pk)
        with self._guard:
            return bool(self._episodes)

    # The extractor's pieces.

    def _extract(self, pk: int) -> None:
        try:
            extract_test_delay()
            episode_extract(episode_pk=pk)  # marks the episode done or failed with its reason
        except TransientExtractionError:
            # Two extractions of one scope deadlocked on their (subject, attribute) locks, a model
            # timed out: tried again later, as a Celery worker retries (memories.tasks), up to
            # MAX_RETRIES claims; after that it stays failed with its reason for `memoryweb retry`.
            if Episode.objects.filter(pk=pk, status=EpisodeStatus.FAILED, attempts__lte=MAX_RETRIES).update(
                status=EpisodeStatus.PENDING, claim_id="", claimed_at=timezone.now()
            ):
                timer = threading.Timer(random.uniform(*RETRY_SECONDS), self.announce, args=("memories.extract_episode", (pk,)))
                timer.daemon = True
                timer.start()
        except Exception:
            logger.warning("Extracting episode %s failed", pk, exc_info=True)

    def _adopt_waiting(self) -> None:
        """Episodes pending for longer than two sweeps: announced to a runner that died before its
        claim, or waiting in a busy runner's backlog (claims are atomic, so sharing it is safe)."""
        waited = timezone.now() - timedelta(seconds=2 * settings.MEMORYWEB_BACKGROUND_SWEEP_SECONDS)
        waiting = Episode.objects.filter(status=EpisodeStatus.PENDING, ingested_at__lt=waited).order_by("id")
        ids = list(waiting.values_list("id", flat=True)[: 4 * EXTRACT_BATCH])
        if ids:
            with self._guard:
                self._episodes.update(ids)

    def _claim(self, episode_ids: list[int]) -> list[int]:
        if not episode_ids:
            return []
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memories_episode e SET status = 'processing', claim_id = %s, claimed_at = now(), attempts = e.attempts + 1"
                " FROM (SELECT id FROM memories_episode WHERE id = ANY(%s) AND status = 'pending'"
                "       ORDER BY id FOR UPDATE SKIP LOCKED) c WHERE e.id = c.id RETURNING e.id",
                [self.claim_id, episode_ids],
            )
            return sorted(row[0] for row in cursor.fetchall())

    def _hold_liveness_lock(self) -> None:
        """This runner's advisory lock, on the extractor's connection, taken again whenever that
        connection is new: while it is held, the runner's claims are live."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
            if backend != self._locked_backend:
                cursor.execute("SELECT pg_advisory_lock(%s, %s)", [RUNNER_LOCKS, self.key])
                self._locked_backend = backend

    def _take_over_dead_claims(self) -> None:
        """Claims of runners whose lock nobody holds (their process died mid-batch) become this
        runner's, and are extracted in its next batches."""
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memories_episode e SET claim_id = %s, claimed_at = now(), attempts = e.attempts + 1"
                " FROM (SELECT id FROM memories_episode WHERE status = 'processing' AND claim_id LIKE %s AND claim_id <> %s"
                "       AND substr(claim_id, %s)::bigint NOT IN ("
                "         SELECT l.objid::bigint FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
                "         WHERE l.locktype = 'advisory' AND l.classid = %s::oid AND l.objsubid = 2 AND d.datname = current_database())"
                "       FOR UPDATE SKIP LOCKED) c WHERE e.id = c.id RETURNING e.id",
                [self.claim_id, f"{CLAIM_PREFIX}%", self.claim_id, len(CLAIM_PREFIX) + 1, RUNNER_LOCKS],
            )
            taken = sorted(row[0] for row in cursor.fetchall())
        if taken:
            logger.info("Took over %s episodes claimed by runners that died", len(taken))
        for pk in taken:
            self._extract(pk)
