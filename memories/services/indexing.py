"""Telling retrieval that a scope changed: its search index catches up after the commit."""

import logging
from functools import partial

from django.db import transaction

from memories.models import Scope

logger = logging.getLogger("memoryweb.ingest")


def queue_index(scope: Scope) -> None:
    """Queue `retrieval.index_scope` once the current transaction commits (at once outside one).

    `robust`: a broker that is down, or a failing embedder when run in-process, is logged and does
    not fail a call whose data is saved already; `recall` catches the index up before it searches."""
    from retrieval.tasks import index_scope

    transaction.on_commit(partial(index_scope.delay, scope.pk), robust=True)
