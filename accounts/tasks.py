"""Celery tasks of the accounts app. Doors only: each calls one service."""

from accounts.calllog import call_log_prune
from memoryweb.celery import app


# Bound to memoryweb's app (like memories.tasks), not shared_task.
@app.task(name="accounts.prune_call_log")
def prune_call_log() -> dict[str, int]:
    """Celery beat's hourly pruning (CELERY_BEAT_SCHEDULE): calls older than
    MEMORYWEB_CALL_LOG_DAYS, idempotency keys older than MEMORYWEB_IDEMPOTENCY_KEY_HOURS."""
    return call_log_prune()
