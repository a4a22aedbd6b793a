from django.conf import settings
from django.core.management.base import CommandError

from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import progress_bar
from memoryweb.providers.failures import ModelError
from memories.scopes import scope_get
from memories.services.consolidate import ConsolidationReceipt, consolidate


class Command(MemorywebCommand):
    help = (
        "Condense a scope's old, unimportant episodes into summary episodes (the originals are kept "
        "and linked): `consolidate --scope S [--dry-run]`."
    )

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument("--dry-run", action="store_true", help="show what would be condensed and change nothing")

    def handle(self, *args, **options):
        principal = self.principal(options)
        dry_run = options["dry_run"]
        scope = scope_get(principal, options["scope"], Access.READ if dry_run else Access.WRITE)
        try:
            with progress_bar(label=f"consolidate {scope.slug}", quiet=options["json"], unit="episodes") as progress:
                receipt = consolidate(principal=principal, scope=scope, dry_run=dry_run, progress=progress)
        except ModelError as exc:  # the model in force cannot be used at all (a configuration mistake)
            raise CommandError(f"The language model cannot be used: {exc}") from None
        self.emit(options, receipt.as_dict(), _text(receipt))
        if receipt.failed:
            first = receipt.failed[0]
            raise CommandError(
                f"{len(receipt.failed)} batch(es) failed and their episodes are untouched; the first "
                f"({first['subject'] or 'unknown'}, {first['period']}): {first['error']}"
            )


def _text(receipt: ConsolidationReceipt) -> str:
    which = (f"old, unimportant episodes (happened before {receipt.cutoff:%Y-%m-%d}, importance below "
             f"{settings.CONSOLIDATION_IMPORTANCE_CAP:g})")
    if not receipt.batches:
        return (f"Nothing to consolidate in {receipt.scope}: {receipt.candidates} {which} not consolidated yet, "
                "and no two of them share a person and a month.")
    batched = sum(len(b.episode_ids) for b in receipt.batches)
    if receipt.dry_run:
        lines = [f"Would condense {batched} of {receipt.candidates} {which} of {receipt.scope} into "
                 f"{_summaries(len(receipt.batches))} (writer: {receipt.writer}; nothing changed):"]
        lines += [f"  {b.subject or 'unknown'}, {b.period}: {len(b.episode_ids)} episodes" for b in receipt.batches]
        return "\n".join(lines)
    lines = [f"Condensed {receipt.consolidated} {which} of {receipt.scope} into {_summaries(len(receipt.summaries))} "
             f"(writer: {receipt.writer}); the originals are kept and linked."]
    lines += [f"  summary {s['id']}: {s['subject'] or 'unknown'}, {s['period']}, {s['episodes']} episodes" for s in receipt.summaries]
    lines += [f"  failed: {f['subject'] or 'unknown'}, {f['period']}, {f['episodes']} episodes: {f['error']}" for f in receipt.failed]
    if receipt.skipped:
        lines.append(f"  {receipt.skipped} batch(es) skipped: another run consolidated their episodes meanwhile")
    if receipt.not_tried:
        lines.append(f"  {receipt.not_tried} batch(es) not tried: the model was unreachable; run it again later")
    return "\n".join(lines)


def _summaries(count: int) -> str:
    return "1 summary" if count == 1 else f"{count} summaries"
