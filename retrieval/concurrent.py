"""Searches at once: the vector searches and the entity look-ups run on pool threads, each on that
thread's own database connection, while BM25 runs on the caller's. PostgreSQL executes each in
its own backend, so the slowest sets the latency instead of their sum.

Only outside a transaction: inside one, the caller's uncommitted rows are invisible to another
connection (and a test's transaction is exactly that), so both run here, one after the other.
The pool's threads keep their connections open between calls; a connection found broken is
closed and the search runs again on the caller's connection, so a restarted database costs one
slower query, never a failed one. Any other failure (the embedder's) is the caller's at once.

`soon` starts the query's embedding on a thread of its own, so the lexical search and the
entity look-ups run while the model works; the indexer uses it the same way, writing a batch's
documents and postings while the model embeds their texts.

Side by side only while this process runs no other search (`searching`): the parts of one search
overlap on cores the process would otherwise leave idle, but when several searches are in
flight the cores are busy already, and the hand-offs between threads (a task queued, a thread
woken, the GIL passed and taken back, a second connection's backend scheduled) are CPU that no
request gets back. Then a search runs its parts one after the other on its own thread and
connection, as inside a transaction.
"""

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from django.conf import settings
from django.db import Error as DatabaseError, connection

logger = logging.getLogger(__name__)
A = TypeVar("A")

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
# The query embeddings have threads of their own: a search thread waits for one, so they must
# never queue behind the searches.
_embedding: ThreadPoolExecutor | None = None


def _forget_pool_after_fork() -> None:
    """A forked child (a prefork worker) has none of its parent's threads: it starts its own pool."""
    global _executor, _executor_lock, _embedding
    _executor, _executor_lock, _embedding = None, threading.Lock(), None


os.register_at_fork(after_in_child=_forget_pool_after_fork)


# Searches in flight in this process (`searching`), and the lock that counts them.
_in_flight = 0
_in_flight_lock = threading.Lock()


@contextmanager
def searching() -> Iterator[None]:
    """Counts a search as in flight while the block runs (see the module doc)."""
    global _in_flight
    with _in_flight_lock:
        _in_flight += 1
    try:
        yield
    finally:
        with _in_flight_lock:
            _in_flight -= 1


def _overlap() -> bool:
    """Whether work may go to other threads now: allowed, and no more than one search in flight."""
    return settings.RETRIEVAL_CONCURRENT and _in_flight <= 1


def side_by_side(foreground: Callable[[], Any], *background: Callable[[], Any]) -> tuple:
    """(foreground(), *each background()): the background work on pool threads when that is safe
    and pays (outside a transaction, no other search in flight), else one after the other."""
    if not _overlap() or connection.in_atomic_block:
        return (foreground(), *(work() for work in background))
    futures = [_pool().submit(_on_own_connection, work) for work in background]
    ahead = foreground()
    results = []
    for work, future in zip(background, futures):
        try:
            results.append(future.result())
        except (DatabaseError, connection.Database.Error) as exc:  # its connection failed: once more on ours
            logger.warning("concurrent search failed on its own connection (%s); running it here", exc)
            results.append(work())
    return (ahead, *results)


class Soon:
    """A value being computed on another thread; `get()` waits for it (and raises what it raised)
    and says how long it waited in `waited` (seconds), `took` how long the work itself took."""

    def __init__(self, work: Callable[[], A], *, background: bool):
        self.took = self.waited = 0.0
        self._future: Future | None = None
        self._value = None
        if background:
            self._future = _embedding_pool().submit(self._timed, work)
        else:
            self._value = self._timed(work)

    def _timed(self, work: Callable[[], A]) -> A:
        started = time.perf_counter()
        try:
            return work()
        finally:
            self.took = time.perf_counter() - started

    def get(self) -> A:
        if self._future is None:
            return self._value
        started = time.perf_counter()
        value = self._future.result()  # several threads may wait at once: each reads the one result
        self.waited = max(self.waited, time.perf_counter() - started)
        return value


def soon(work: Callable[[], A]) -> Soon:
    """`work()` started now on a thread of its own, so the caller can do other work meanwhile
    (the query's embedding while the lexical search runs, a batch's while its documents are
    written): touches no database. Done at once instead while another search is in flight."""
    return Soon(work, background=_overlap())


def _embedding_pool() -> ThreadPoolExecutor:
    global _embedding
    with _executor_lock:
        if _embedding is None:
            _embedding = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memoryweb-query-embed")
        return _embedding


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=settings.RETRIEVAL_CONCURRENT_THREADS, thread_name_prefix="memoryweb-search")
        return _executor


def shutdown() -> None:
    """Close the pool's connections and stop its threads (a test database is dropped at the end
    and must have no other sessions); the next search starts a new pool."""
    global _executor
    with _executor_lock:
        pool, _executor = _executor, None
    if pool is None:
        return
    workers = pool._max_workers
    barrier = threading.Barrier(workers)

    def close_here():
        connection.close()
        try:
            barrier.wait(timeout=5)  # holds each thread until all have one: every thread closes its own
        except threading.BrokenBarrierError:
            pass

    for _ in range(workers):
        pool.submit(close_here)
    pool.shutdown(wait=True)


def _on_own_connection(work: Callable[[], A]) -> A:
    if connection.connection is not None and connection.errors_occurred and not connection.is_usable():
        connection.close()
    try:
        return work()
    except Exception:
        connection.close()  # whatever went wrong, the next call starts on a fresh connection
        raise
