"""Telling retrieval that a scope changed: its search index catches up after the commit."""

from memoryweb.queue import enqueue
from memories.models import Scope


def queue_index(scope: Scope) -> None:
    """Queue `retrieval.index_scope` once the current transaction commits (at once outside one).

    A broker that is down, or a failing embedder when run in-process, is logged and does not fail
    a call whose data is saved already: `recall` still finds rows not indexed yet by their text (and
    indexes a small backlog itself when the index lock is free), and the healing task re-queues
    scopes whose index is behind."""
    enqueue("retrieval.index_scope", scope.pk)
