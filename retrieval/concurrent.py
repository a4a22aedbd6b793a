"""Searches at once: the vector searches and the entity look-ups run on pool threads, each on that
thread's own database connection, while BM25 runs on the caller's. PostgreSQL executes each in
its own backend, so the slowest sets the latency instead of their sum.

Only outside a transaction: inside one, the caller's uncommitted rows are invisible to another
connection (and a test's transaction is exactly that), so both run here, one after the other.
The pool's threads keep their connections open between calls; a connection found broken is
closed and the search runs again on the caller's connection, so a restarted database costs one
slower query, never a failed one.
"""

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)
A = TypeVar("A")

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _forget_pool_after_fork() -> None:
    """A forked child (a prefork worker) has none of its parent's threads: it starts its own pool."""
    global _executor, _executor_lock
    _executor, _executor_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_after_fork)


def side_by_side(foreground: Callable[[], Any], *background: Callable[[], Any]) -> tuple:
    """(foreground(), *each background()): the background work on pool threads when that is safe."""
    if not settings.RETRIEVAL_CONCURRENT or connection.in_atomic_block:
        return (foreground(), *(work() for work in background))
    futures = [_pool().submit(_on_own_connection, work) for work in background]
    ahead = foreground()
    results = []
    for work, future in zip(background, futures):
        try:
            results.append(future.result())
        except Exception as exc:  # its connection failed: once more on ours
            logger.warning("concurrent search failed on its own connection (%s); running it here", exc)
            results.append(work())
    return (ahead, *results)


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
