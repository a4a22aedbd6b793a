"""Index hygiene for rows deleted outside the services that clean up after themselves.

Forgetting and erasure (retrieval/forget.py, retrieval/erase.py) take the search index with them
in their own transaction. A fact, episode or turn deleted any other way (the ORM's cascades: a
session or turn deleted from a shell or a script) would leave its documents, postings and
vectors behind, and the term statistics counting them. This is a safety net, not a business
flow, so it is a signal: each deleted row is noted, and after the commit
`retrieval.indexing.deleted_rows_unindex` takes what is still indexed out, under the scope's
lock. Notes of a transaction that rolled back are harmless (rows that exist are skipped) and go
with the next commit's. Raw SQL deletes send no signal; the index task's full sweep
(`orphans_remove`) finds those. A deleted scope (the Django admin, a shell) takes its own HNSW
graphs (memories/services/vectors.py) with it after the commit: partial indexes over no rows
would stay in the catalogue, weighed by the planner for every vector query.
"""

import logging
import threading

from django.db import transaction
from django.db.models.signals import post_delete

from memories.models import Episode, Fact, Scope, Turn
from memories.services.vectors import scope_graphs_drop_on_commit
from retrieval.indexing import DeletedRow, deleted_rows_unindex

logger = logging.getLogger("memoryweb.retrieval")

_noted = threading.local()  # Django's connections are per thread, so are the notes


def _note(row: DeletedRow) -> None:
    pending = getattr(_noted, "rows", None)
    if pending is None:
        pending = _noted.rows = []
    pending.append(row)
    transaction.on_commit(_flush)  # the first to run after the commit takes every note


def _flush() -> None:
    rows, _noted.rows = getattr(_noted, "rows", None) or [], []
    if not rows:
        return
    try:
        deleted_rows_unindex(rows)
    except Exception:
        # The rows are deleted already; the index task's sweep removes what is left.
        logger.warning("Unindexing %d deleted rows failed; the next full index run removes them", len(rows), exc_info=True)


def fact_deleted(sender, instance: Fact, **kwargs) -> None:
    _note(DeletedRow(instance.scope_id, "fact", instance.pk))


def episode_deleted(sender, instance: Episode, **kwargs) -> None:
    if instance.turn_id is None:  # an episode of a turn is found through the turn's documents
        _note(DeletedRow(instance.scope_id, "episode", instance.pk))


def turn_deleted(sender, instance: Turn, **kwargs) -> None:
    _note(DeletedRow(instance.scope_id, "turn", instance.pk, instance.session_id, instance.position))


def scope_deleted(sender, instance: Scope, **kwargs) -> None:
    scope_graphs_drop_on_commit(scope_id=instance.pk)


def connect() -> None:
    post_delete.connect(fact_deleted, sender=Fact, dispatch_uid="retrieval.fact_deleted")
    post_delete.connect(episode_deleted, sender=Episode, dispatch_uid="retrieval.episode_deleted")
    post_delete.connect(turn_deleted, sender=Turn, dispatch_uid="retrieval.turn_deleted")
    post_delete.connect(scope_deleted, sender=Scope, dispatch_uid="retrieval.scope_deleted")
