"""The caller log: every API and MCP call, reads and refusals too, with who, what, which scope,
the status and the latency. Recorded by the doors (`memoryweb/api.py`, `memoryweb/mcp.py`) after
the answer is sent (the API's when the server closes the response); read by a scope's team
admins; pruned after MEMORYWEB_CALL_LOG_DAYS.

A process writes its calls' rows together: a row waits at most MEMORYWEB_CALL_LOG_DELAY seconds
(0.2) for the process's writer thread, which INSERTs all that came meanwhile in one statement,
and whatever waits when the process exits. Written one at a time, each call's row cost its
request about 0.6 ms of CPU and a round trip (1.5-1.8 ms of a thread at one client, beside the
next request), and each row paid for its own statement. 0 writes each row as it comes.

It lives in accounts, the lowest domain layer, beside the audit trail, so that every door can
write it. The scope is named by slug, as the caller sent it: the door need not have found it.
"""

import atexit
import functools
import logging
import os
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone
from psycopg.pq import TransactionStatus

from accounts.idempotency import idempotency_prune
from accounts.models import ApiCall
from accounts.permissions import Access, Principal, can
from memoryweb.errors import Forbidden

logger = logging.getLogger(__name__)

PRUNE_BATCH = 10_000  # rows per DELETE, so pruning a busy log never holds a long lock
WRITE_BATCH = 500  # rows per INSERT of the writer


def call_record(
    *, principal: Principal | None, door: str, operation: str, scope_slug: str | None, status: int, latency_ms: float,
) -> None:
    """Log one call. Never raises: a call is never refused because it could not be logged."""
    try:
        slug = (scope_slug or "")[: ApiCall._meta.get_field("scope_slug").max_length]
        values = (
            door, operation[:128], principal.user.pk if principal else None,
            principal.token.prefix if principal and principal.token else "", slug, slug, status, round(latency_ms, 3),
            timezone.now(),
        )
        if connection.in_atomic_block:  # a test, or a door inside a transaction: a failure must not break it
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(_insert_sql(1), values)
        elif settings.MEMORYWEB_CALL_LOG_DELAY > 0:
            _writer.add(values)
        else:
            _rows_write([values])
    except Exception:
        logger.exception("Could not log the %s call %s.", door, operation)
        _abandon_transaction()


def call_log_flush() -> int:
    """Write the calls this process recorded and has not written yet, now; how many. The writer
    thread calls it every MEMORYWEB_CALL_LOG_DELAY seconds, and the process at exit."""
    return _writer.flush()


class _Writer:
    """The process's recorded calls waiting for their INSERT, and the thread that writes them: it
    runs while calls come, and ends (its connection closed, or back in the pool) once a wait
    brought none."""

    def __init__(self):
        self.rows: list[tuple] = []
        self.lock = threading.Lock()
        self.pid: int | None = None
        self.thread: threading.Thread | None = None
        self.wake = threading.Event()  # set: write now (at exit) rather than after the wait

    def add(self, values: tuple) -> None:
        with self.lock:
            if self.pid != os.getpid():  # first use, or a forked child: the parent writes its own rows
                self.rows, self.pid, self.thread = [], os.getpid(), None
            self.rows.append(values)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="memoryweb-call-log", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        try:
            while True:
                self.wake.wait(settings.MEMORYWEB_CALL_LOG_DELAY)
                self.wake.clear()
                self.flush()
                with self.lock:
                    if not self.rows:
                        self.thread = None
                        return
        finally:
            try:
                connection.close()
            except Exception:
                logger.exception("Could not close the caller log writer's connection.")

    def flush(self) -> int:
        with self.lock:
            rows, self.rows = self.rows, []
        try:
            for start in range(0, len(rows), WRITE_BATCH):
                _rows_write(rows[start : start + WRITE_BATCH])
        except Exception:
            logger.exception("Could not write %d calls to the caller log.", len(rows))
            _abandon_transaction()
        return len(rows)

    def settle(self, timeout: float = 10.0) -> None:
        """Woken to write now, and waited for until it ended (at exit, and in tests)."""
        thread = self.thread
        if thread is not None and self.pid == os.getpid():
            self.wake.set()
            thread.join(timeout)

    def at_exit(self) -> None:
        """The rows the thread is writing, then those still waiting."""
        self.settle()
        self.flush()


_writer = _Writer()
atexit.register(_writer.at_exit)


def _rows_write(rows: list[tuple]) -> None:
    """One INSERT of `rows` in its own transaction, committed without waiting for the WAL to reach
    the disk (1–2 ms, on a thread's time): a crash of PostgreSQL may lose the last fraction of a
    second of the log, never a stopped server's, and nothing of the data the calls wrote. Begun,
    written and committed in one round trip (three with transaction.atomic())."""
    with connection.cursor() as cursor:
        cursor.execute(f"BEGIN; SET LOCAL synchronous_commit TO OFF; {_insert_sql(len(rows))}; COMMIT",
                       [value for row in rows for value in row])


def _abandon_transaction() -> None:
    """A failed INSERT leaves the round trip's own transaction open and aborted (its COMMIT never
    ran): rolled back, so the connection goes on as it was."""
    try:
        if not connection.in_atomic_block and connection.connection is not None:
            if connection.connection.info.transaction_status != TransactionStatus.IDLE:
                connection.connection.rollback()
    except Exception:
        logger.exception("Could not roll back the caller log's failed transaction; closing the connection.")
        connection.close()


@functools.lru_cache(maxsize=64)
def _insert_sql(rows: int) -> str:
    """One INSERT of `rows` rows, written once per count (the ORM spent ~0.5 ms of CPU per call
    building one), each row's scope id looked up by its slug inside it: one statement."""
    quote = connection.ops.quote_name
    scopes = quote(ApiCall._meta.get_field("scope").related_model._meta.db_table)  # memories.Scope, above this layer
    names = ["door", "operation", "user_id", "token_prefix", "scope_id", "scope_slug", "status", "latency_ms", "created_at"]
    values = ["%s"] * len(names)
    values[names.index("scope_id")] = f"(SELECT id FROM {scopes} WHERE slug = NULLIF(%s, ''))"
    row = f"({', '.join(values)})"
    return f"INSERT INTO {quote(ApiCall._meta.db_table)} ({', '.join(map(quote, names))}) VALUES {', '.join([row] * rows)}"


@dataclass(frozen=True)
class CallOut:
    when: datetime
    door: str
    operation: str
    user: str | None
    token: str | None  # the token's public prefix
    scope: str
    status: int
    latency_ms: float

    @classmethod
    def of(cls, call: ApiCall) -> "CallOut":
        return cls(
            when=call.created_at, door=call.door, operation=call.operation, user=call.user.username if call.user else None,
            token=f"mw_{call.token_prefix}_…" if call.token_prefix else None, scope=call.scope_slug, status=call.status,
            latency_ms=call.latency_ms,
        )

    def as_dict(self) -> dict:
        return {
            "when": self.when, "door": self.door, "operation": self.operation, "user": self.user, "token": self.token,
            "scope": self.scope, "status": self.status, "latency_ms": self.latency_ms,
        }


def call_list(*, principal: Principal, scope, since: datetime | None = None) -> QuerySet[ApiCall]:
    """A scope's calls, newest first, for an admin of the scope's team (a user, not a token:
    tokens never administer). Others are `Forbidden`; find the scope with `scope_get(…, READ)`
    first, so a scope the principal cannot read is a NotFound before this."""
    if not can(principal, scope, Access.ADMIN):
        raise Forbidden(f"Only admins of team {scope.team.slug!r} may read the log of scope {scope.slug!r}.")
    calls = ApiCall.objects.filter(scope=scope).select_related("user")
    if since is not None:
        calls = calls.filter(created_at__gte=since)
    return calls.order_by("-created_at", "-id")


def call_log_prune(*, now: datetime | None = None) -> dict[str, int]:
    """Delete calls older than MEMORYWEB_CALL_LOG_DAYS and idempotency keys past their hours;
    returns how many of each."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.MEMORYWEB_CALL_LOG_DAYS)
    calls = 0
    while True:
        batch = list(ApiCall.objects.filter(created_at__lt=cutoff).values_list("pk", flat=True)[:PRUNE_BATCH])
        if not batch:
            break
        calls += ApiCall.objects.filter(pk__in=batch).delete()[0]
    return {"calls": calls, "idempotency_keys": idempotency_prune(now=now)}
