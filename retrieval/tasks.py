"""Celery tasks of the retrieval app. Doors only: each calls one service."""

from memoryweb.celery import app
from memories.models import Scope
from retrieval.backup import scheduled_backups
from retrieval.heal import heal as heal_all
from retrieval.indexing import index_pending, index_queued


# Bound to memoryweb's app (like memories.tasks), not shared_task.
@app.task(name="retrieval.index_scope", bind=True, acks_late=True, max_retries=5, default_retry_delay=10)
def index_scope(self, scope_id: int) -> int:
    """Catch a scope's search index up after ingest or extraction (queue it with
    `transaction.on_commit`). Idempotent; concurrent runs for one scope take turns. On a worker it
    clears the scope's "a run is queued" mark before it sweeps (`queue_index`, `index_queued`)."""
    scope = Scope.objects.filter(pk=scope_id).first()
    if scope is None:
        return 0  # deleted meanwhile
    try:
        if self.request.is_eager:  # in-process, the caller waits until its rows are indexed
            return index_pending(scope=scope, full=True)
        return index_queued(scope=scope)
    except Exception as exc:  # the embedder or the database hiccuped: try again later
        if self.request.is_eager:
            raise  # in-process there is no queue to come back to; `memoryweb heal` (or the next ingest) catches up
        raise self.retry(exc=exc) from exc


@app.task(name="retrieval.heal")
def heal() -> dict[str, int]:
    """Celery beat's periodic healing (CELERY_BEAT_SCHEDULE): queue again what was lost."""
    return heal_all().as_dict()


@app.task(name="retrieval.backup_scopes")
def backup_scopes() -> dict:
    """Celery beat's scheduled backups (CELERY_BEAT_SCHEDULE, when MEMORYWEB_BACKUP_INTERVAL_HOURS is set)."""
    return scheduled_backups()
