"""Consolidation: a scope's old, unimportant episodes become summary episodes, so the memory stays
compact over the years without losing a word.

What is taken: episodes that happened (`occurred_at`) more than CONSOLIDATION_AGE_DAYS ago, whose
extraction is done, with importance below CONSOLIDATION_IMPORTANCE_CAP, not consolidated yet and
not a summary themselves. An episode without an importance (NULL: never extracted, or restored
without one) is *not* below the cap: unknown is not unimportant, so it is left alone.

How they are grouped: by subject (who said it: the speaker, else the person who stored it, compared
as names are) and period (the calendar month of `occurred_at`, UTC), oldest first; a group larger
than CONSOLIDATION_BATCH_SIZE is split into batches of near-equal size. A group of one is left
alone: a summary of one episode would only repeat it.

Each batch becomes one summary episode: written by the language model in force
(`memories.extraction.summary`: the prompt and reply schema), or offline an extractive summary of
the originals' first sentences. The summary has `source = "consolidation"` (CONSOLIDATION_SOURCE),
status `done` (it is never extracted, so it adds no duplicate facts), the latest original's
`occurred_at`, the originals' highest importance and their mentions (so erasing a person also finds
the summaries of what they said). The originals are kept, with `consolidated_into` pointing at
it; facts keep their source episodes, and originals stay indexed and found (retrieval ranks a
summary a little higher: retrieval/search/hydration.py).

The slow part (the model) runs outside any transaction; then each batch is one transaction that
locks its originals and writes the summary only if every one of them is still unconsolidated, so
two runs at once cannot condense an episode twice, and a batch is all or nothing. A batch the model
fails on (invalid replies after LLM_MAX_ATTEMPTS, a refusal) is left untouched and reported; a
model that is unreachable or overloaded ends the run there. Running it again finds nothing to do.
A run that wrote or failed something is audited once (`scope.consolidate`, with the counts and the
summaries' ids), after its last batch.
"""

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.audit import audit_record
from accounts.permissions import Access, Principal, require
from memoryweb.providers.failures import ModelError
from memoryweb.providers.llm import get_llm
from memories.extraction.summary import Original, Summary, extractive_summary, summary_check, summary_prompt, summary_system
from memories.models import CONSOLIDATION_SOURCE, Episode, EpisodeStatus, Mention, Scope
from memories.normalize import normalize_name
from memories.services.indexing import queue_index

logger = logging.getLogger("memoryweb.consolidate")

Progress = Callable[[int, int], None]


@dataclass
class Batch:
    """Episodes of one subject and one month that one summary will condense."""

    subject: str
    period: str  # "2024-03"
    episode_ids: list[int]

    def as_dict(self) -> dict:
        return {"subject": self.subject, "period": self.period, "episodes": len(self.episode_ids)}


@dataclass
class ConsolidationReceipt:
    scope: str
    dry_run: bool
    at: datetime
    cutoff: datetime  # episodes that happened before this were old enough
    writer: str  # "extractive (offline)" or the model's name
    candidates: int = 0  # old and unimportant episodes not consolidated yet
    batches: list[Batch] = field(default_factory=list)  # what the run would do (dry run) or tried
    summaries: list[dict] = field(default_factory=list)  # written: id, subject, period, episodes
    failed: list[dict] = field(default_factory=list)  # subject, period, episodes, error
    skipped: int = 0  # batches whose episodes another run consolidated meanwhile
    not_tried: int = 0  # batches left when the model became unreachable

    @property
    def consolidated(self) -> int:
        return sum(s["episodes"] for s in self.summaries)

    def as_dict(self) -> dict:
        return {
            "scope": self.scope, "dry_run": self.dry_run, "at": self.at.isoformat(), "cutoff": self.cutoff.isoformat(),
            "writer": self.writer, "candidates": self.candidates, "batches": [b.as_dict() for b in self.batches],
            "summaries": self.summaries, "episodes_consolidated": self.consolidated, "failed": self.failed,
            "skipped": self.skipped, "not_tried": self.not_tried,
        }


def consolidate(
    *, principal: Principal | None, scope: Scope, dry_run: bool = False, now: datetime | None = None, progress: Progress | None = None,
) -> ConsolidationReceipt:
    """Condense `scope`'s old, unimportant episodes into summaries (the module's docstring says
    which and how). A dry run needs read access and writes nothing; a run needs write access."""
    require(principal, scope, Access.READ if dry_run else Access.WRITE)
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.CONSOLIDATION_AGE_DAYS)
    llm = get_llm()
    receipt = ConsolidationReceipt(
        scope=scope.slug, dry_run=dry_run, at=now, cutoff=cutoff, writer="extractive (offline)" if llm.is_offline else llm.name,
    )
    rows = list(_candidates(scope=scope, cutoff=cutoff).values_list("pk", "speaker", "author__username", "occurred_at"))
    receipt.candidates = len(rows)
    receipt.batches = _batches(rows, size=settings.CONSOLIDATION_BATCH_SIZE)
    if dry_run or not receipt.batches:
        return receipt
    total = sum(len(b.episode_ids) for b in receipt.batches)
    done = 0
    try:
        for index, batch in enumerate(receipt.batches):
            try:
                text = _summary_text(batch, scope=scope, llm=llm)
            except ModelError as exc:
                receipt.failed.append({**batch.as_dict(), "error": f"The language model ({llm.name}) failed: {exc}"})
                if exc.retryable:  # unreachable, timed out, overloaded: the next batch would fail the same way
                    receipt.not_tried = len(receipt.batches) - index - 1
                    break
            else:
                summary = _batch_write(batch, scope=scope, text=text, now=now)
                if summary is None:
                    receipt.skipped += 1
                else:
                    receipt.summaries.append({"id": str(summary.public_id), **batch.as_dict()})
            done += len(batch.episode_ids)
            if progress:
                progress(done, total)
    finally:
        if receipt.summaries or receipt.failed:
            _audit(principal=principal, scope=scope, receipt=receipt)
        if receipt.summaries:
            queue_index(scope)  # the summaries become searchable
    return receipt


def consolidate_scopes(*, now: datetime | None = None) -> dict:
    """Celery beat's nightly consolidation of every scope, as the system. A scope that fails is
    logged and the others go on. Returns the totals."""
    totals = {"scopes": 0, "summaries": 0, "episodes": 0, "failed_batches": 0, "failed_scopes": []}
    for scope in Scope.objects.order_by("id"):
        totals["scopes"] += 1
        try:
            receipt = consolidate(principal=None, scope=scope, now=now)
        except Exception:
            logger.exception("Consolidating scope %s failed", scope.slug)
            totals["failed_scopes"].append(scope.slug)
            continue
        totals["summaries"] += len(receipt.summaries)
        totals["episodes"] += receipt.consolidated
        totals["failed_batches"] += len(receipt.failed)
    return totals


def _candidates(*, scope: Scope, cutoff: datetime):
    # importance < cap is false for NULL in SQL: an episode nobody scored is never taken.
    return (
        Episode.objects.in_scope(scope)
        .filter(status=EpisodeStatus.DONE, consolidated_into__isnull=True, occurred_at__lt=cutoff,
                importance__lt=settings.CONSOLIDATION_IMPORTANCE_CAP)
        .exclude(source=CONSOLIDATION_SOURCE)
        .order_by("occurred_at", "id")
    )


def _batches(rows: list[tuple], *, size: int) -> list[Batch]:
    """Rows (pk, speaker, author's name, occurred_at), oldest first, grouped by subject and month
    and split into batches of at most `size`, as even as can be (51 → 26 + 25)."""
    groups: dict[tuple[str, str], tuple[str, list[int]]] = {}
    for pk, speaker, author, occurred_at in rows:
        subject = speaker or author or ""
        period = f"{occurred_at.astimezone(UTC):%Y-%m}"
        groups.setdefault((normalize_name(subject), period), (subject, []))[1].append(pk)
    batches = []
    for (_, period), (subject, ids) in groups.items():
        if len(ids) < 2:
            continue
        count = -(-len(ids) // size)  # ceil
        step, extra = divmod(len(ids), count)
        start = 0
        for n in range(count):
            end = start + step + (1 if n < extra else 0)
            batches.append(Batch(subject=subject, period=period, episode_ids=ids[start:end]))
            start = end
    return batches


def _summary_text(batch: Batch, *, scope: Scope, llm) -> str:
    """The summary episode's text: a header naming who, when and how many, then the body. Slow
    with a model: called outside any transaction."""
    episodes = list(Episode.objects.in_scope(scope).filter(pk__in=batch.episode_ids).order_by("occurred_at", "id")
                    .values_list("text", "occurred_at"))
    originals = [Original(text=text, occurred_at=occurred_at) for text, occurred_at in episodes]
    if llm.is_offline:
        body = extractive_summary(originals)
    else:
        reply = llm.complete_json(
            system=summary_system(), user=summary_prompt(subject=batch.subject or "unknown", period=batch.period, originals=originals),
            schema=Summary, check=summary_check,
        )
        body = reply.summary
    month = datetime.strptime(batch.period, "%Y-%m")
    who = f" from {batch.subject}" if batch.subject else ""
    return f"Summary of {len(originals)} messages{who}, {month:%B %Y}: {body}"


def _batch_write(batch: Batch, *, scope: Scope, text: str, now: datetime) -> Episode | None:
    """One transaction: the summary, its mentions and the originals' links, or nothing when any
    original was consolidated (or forgotten) meanwhile."""
    with transaction.atomic():
        originals = list(
            Episode.objects.in_scope(scope).select_for_update()
            .filter(pk__in=batch.episode_ids, consolidated_into__isnull=True, status=EpisodeStatus.DONE)
            .exclude(source=CONSOLIDATION_SOURCE).order_by("occurred_at", "id")
        )
        if len(originals) != len(batch.episode_ids):
            return None
        summary = Episode.objects.create(
            scope=scope, text=text, speaker=Counter(e.speaker for e in originals).most_common(1)[0][0],
            occurred_at=originals[-1].occurred_at, ingested_at=now,
            importance=max(e.importance for e in originals), source=CONSOLIDATION_SOURCE,
            status=EpisodeStatus.DONE, processed_at=now,
        )
        mentions = set(Mention.objects.in_scope(scope).filter(episode_id__in=batch.episode_ids).values_list("entity_id", "role"))
        Mention.objects.bulk_create(
            [Mention(scope=scope, episode=summary, entity_id=entity, role=role) for entity, role in sorted(mentions)],
            ignore_conflicts=True,
        )
        Episode.objects.filter(pk__in=batch.episode_ids).update(consolidated_into=summary)
    return summary


def _audit(*, principal: Principal | None, scope: Scope, receipt: ConsolidationReceipt) -> None:
    audit_record(
        principal=principal, action="scope.consolidate", target_type="scope", target_id=scope.public_id, scope=scope,
        after={
            "cutoff": receipt.cutoff.isoformat(), "writer": receipt.writer, "candidates": receipt.candidates,
            "summaries": len(receipt.summaries), "episodes_consolidated": receipt.consolidated,
            "summary_ids": [s["id"] for s in receipt.summaries],
            "failed": receipt.failed,
            "skipped": receipt.skipped, "not_tried": receipt.not_tried,
        },
    )
