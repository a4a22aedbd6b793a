"""Celery tasks: doors that claim a row and call one service."""

import os
import random

from celery.exceptions import SoftTimeLimitExceeded

from memoryweb.celery import app
from memories.services.consolidate import consolidate_scopes as consolidate_all
from memories.services.extract import (
    MAX_RETRIES, TransientExtractionError, episode_claim, episode_extract, episode_time_out, extract_test_delay,
)
from retrieval.services import dedup_nightly_indexed


def retry_countdown(retries: int) -> float:
    """Exponential backoff with jitter: about 10 s, 20 s, 40 s … capped at 10 minutes."""
    return min(600.0, 10.0 * 2**retries) * random.uniform(0.5, 1.0)


# Bound to memoryweb's app rather than `shared_task`: a shared task follows whichever Celery app
# was created last (a client app in a test or script would silently take its messages).
@app.task(
    bind=True,
    name="memories.extract_episode",
    # The message is acknowledged after the task returns: a worker that dies mid-task leaves
    # it unacknowledged, and the broker hands it out again (Redis: after the visibility timeout).
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_RETRIES,
)
def extract_episode(self, episode_pk: int) -> str:
    # A redelivered message or a retry carries the same task id, so it may take back its own
    # 'processing' claim; extraction is idempotent, so running it again is safe.
    claim_id = self.request.id or f"local-{os.getpid()}"
    if not episode_claim(episode_pk=episode_pk, claim_id=claim_id):
        return "skipped"  # done already, or another live task holds it
    try:
        extract_test_delay()
        return episode_extract(episode_pk=episode_pk).status
    except SoftTimeLimitExceeded:
        # MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT (settings: CELERY_TASK_ANNOTATIONS): never left 'processing'.
        return episode_time_out(episode_pk=episode_pk).status
    except TransientExtractionError as exc:
        if self.request.is_eager:
            # In-process there is no queue to come back to later: the episode stays failed
            # with its reason, for a person (or `memoryweb retry`) to retry.
            return "failed"
        # After MAX_RETRIES this raises the error; the episode is failed with its reason already.
        raise self.retry(exc=exc, countdown=retry_countdown(self.request.retries)) from exc


# Acknowledged when it starts (not late, as the others): a nightly run can outlast the broker's
# visibility timeout, and a second copy handed out meanwhile would ask the model again for batches
# the first is writing. A run lost with its worker is lost until the next night, which is harmless:
# consolidation is idempotent and picks up where it stopped.
@app.task(name="memories.consolidate_scopes", acks_late=False)
def consolidate_scopes() -> dict:
    """Celery beat's nightly consolidation of every scope (CELERY_BEAT_SCHEDULE, CONSOLIDATION_HOUR)."""
    return consolidate_all()


@app.task(name="memories.dedup_scopes")
def dedup_scopes() -> dict:
    """Celery beat's nightly deduplication (CELERY_BEAT_SCHEDULE, at DEDUP_HOUR_UTC): proposals
    recorded for every scope, the sure ones merged; then the merged facts' search documents are
    rewritten, as every merge door does."""
    return dedup_nightly_indexed()
