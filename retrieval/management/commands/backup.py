import sys
from pathlib import Path

from django.utils import timezone

from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import progress_bar
from memories.scopes import scope_get
from retrieval.backup import scope_backup


class Command(MemorywebCommand):
    help = "Back up a scope to a gzip'd JSON Lines file (docs/BACKUP-FORMAT.md). Team admins only."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument("--out", metavar="FILE", help="where to write it (default: SLUG-TIMESTAMP.jsonl.gz here; - for stdout)")
        parser.add_argument("--with-vectors", action="store_true", help="add the vectors, so a restore need not embed again")

    def handle(self, *args, **options):
        principal = self.principal(options)
        scope = scope_get(principal, options["scope"], Access.READ)  # the service decides who may back it up
        out = options["out"] or f"{scope.slug}-{timezone.now():%Y%m%dT%H%M%SZ}.jsonl.gz"
        with progress_bar(label=f"backup {scope.slug}", quiet=options["json"]) as progress:
            if out == "-":
                # The file is the output: the receipt would corrupt it, so nothing else is printed.
                scope_backup(principal=principal, scope=scope, out=sys.stdout.buffer, with_vectors=options["with_vectors"],
                             progress=progress)
                return
            partial = Path(out + ".part")
            try:
                with open(partial, "wb") as file:
                    receipt = scope_backup(principal=principal, scope=scope, out=file, with_vectors=options["with_vectors"],
                                           progress=progress)
                partial.replace(out)
            finally:
                partial.unlink(missing_ok=True)
        rows = sum(receipt.counts.values())
        self.emit(options, {**receipt.as_dict(), "path": out},
                  f"Backed up {scope.slug} to {out}: {rows} rows, {receipt.bytes:,} bytes in {receipt.seconds:.1f} s.")
