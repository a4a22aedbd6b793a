"""Telling retrieval that a scope changed: its search index catches up after the commit."""

from functools import partial

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from memoryweb.queue import enqueue
from memories.models import Scope

# With a broker, at most one `retrieval.index_scope` of a scope waits to start its sweep: a mark in
# the cache (Redis) says one is queued, and the run clears it once it holds the scope's lock, just
# before it sweeps (`retrieval.indexing.index_queued`). A change committed while the mark is set
# needs no message of its own: that run's sweep starts after the commit. A burst of ingests into
# one scope then costs a few sweeps instead of one per call. A mark whose run never starts (its
# worker died, the broker lost it) lapses after INDEX_QUEUED_SECONDS; until then healing, which
# queues without the mark, and recall's catch-up cover the scope.
INDEX_QUEUED_SECONDS = 60


def queue_index(scope: Scope) -> None:
    """Queue `retrieval.index_scope` once the current transaction commits (at once outside one),
    unless, with a broker, a run of this scope is queued already and has not started its sweep.

    A broker that is down, or a failing embedder when run in-process, is logged and does not fail
    a call whose data is saved already: `recall` still finds rows not indexed yet by their text (and
    indexes a small backlog itself when the index lock is free), and the healing task re-queues
    scopes whose index is behind."""
    if not settings.REDIS_URL:
        enqueue("retrieval.index_scope", scope.pk)  # in-process: every change runs its own sweep
        return
    # After the commit: a mark set before it could be cleared by a sweep that misses these rows.
    transaction.on_commit(partial(_queue_once, scope.pk), robust=True)


def index_run_starting(scope: Scope) -> None:
    """Called by an index run that holds the scope's lock and is about to sweep: changes committed
    from now on need a run of their own."""
    cache.delete(_queued_key(scope.pk))


def _queue_once(scope_id: int) -> None:
    if cache.add(_queued_key(scope_id), 1, INDEX_QUEUED_SECONDS):
        enqueue("retrieval.index_scope", scope_id, on_commit=False)


def _queued_key(scope_id: int) -> str:
    return f"memoryweb:index-queued:{scope_id}"
