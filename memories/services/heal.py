"""Healing extraction: episodes whose work was lost are queued again.

Two ways an episode is left behind with nothing coming for it:
- `pending` with no message: the broker was down when the transaction committed (the queue call
  is robust, so the caller's data was saved and the message was dropped), or a message was lost;
- `processing` under a claim older than MEMORYWEB_EXTRACT_STALE_SECONDS: its worker was killed
  (the hard time limit is smaller than that window, so no live task still holds it) and its
  message will not come back.

Both are sent again as `memories.extract_episode`. The claim makes that safe: an episode whose
first message does turn up after all is extracted once, and the second message is skipped.
`claimed_at` of a re-queued episode is set to the time it was queued, so the next run (a few
minutes later, while the message may still wait behind others) does not queue it again.
"""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from memoryweb.queue import enqueue
from memories.models import Episode, EpisodeStatus, Scope

# At most this many episodes of each kind per run; the rest wait for the next run.
HEAL_BATCH = 1000


def episodes_heal(*, scope: Scope | None = None) -> dict[str, int]:
    """Queue extraction again for episodes left pending too long or stuck in processing past the
    stale window, in `scope` or in every scope. Returns how many of each kind were queued."""
    now = timezone.now()
    episodes = Episode.objects.all() if scope is None else Episode.objects.in_scope(scope)
    waited_too_long = now - timedelta(seconds=settings.MEMORYWEB_HEAL_PENDING_SECONDS)
    stale = now - timedelta(seconds=settings.MEMORYWEB_EXTRACT_STALE_SECONDS)
    # A pending episode waits from its ingest or, once re-queued, from then (claimed_at).
    lost = episodes.alias(waiting_since=Coalesce("claimed_at", "ingested_at")).filter(
        status=EpisodeStatus.PENDING, waiting_since__lt=waited_too_long
    )
    abandoned = episodes.filter(Q(claimed_at__lt=stale) | Q(claimed_at__isnull=True, ingested_at__lt=stale),
                                status=EpisodeStatus.PROCESSING)
    return {
        "pending_episodes": _requeue(lost, now=now),
        "stale_episodes": _requeue(abandoned, now=now),
    }


def _requeue(episodes, *, now) -> int:
    """Put the episodes back to pending, stamped with when they were queued, and queue them after
    the commit. Rows another healer holds are skipped (it queues them), so two runs at once do
    not both send."""
    with transaction.atomic():
        ids = list(episodes.select_for_update(skip_locked=True).order_by("id").values_list("id", flat=True)[:HEAL_BATCH])
        Episode.objects.filter(pk__in=ids).update(status=EpisodeStatus.PENDING, claim_id="", claimed_at=now)
        for pk in ids:
            enqueue("memories.extract_episode", pk)
    return len(ids)
