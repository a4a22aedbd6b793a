from accounts.permissions import team_get
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import progress_bar
from retrieval.backup import scope_restore


class Command(MemorywebCommand):
    help = "Restore a scope backup into a new or empty scope (or --merge into one that has memory). Team admins only."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("file", metavar="FILE", help="a file written by `memoryweb backup`")
        parser.add_argument("--scope", help="the scope to restore into, new or existing (default: the slug in the file)")
        parser.add_argument("--team", help="team of a new scope (default: your personal team)")
        parser.add_argument("--merge", action="store_true", help="into a scope with memory: add only the rows it lacks")

    def handle(self, *args, **options):
        principal = self.principal(options)
        team = team_get(principal, options["team"]) if options["team"] else None
        with open(options["file"], "rb") as file, progress_bar(label="restore", quiet=options["json"]) as progress:
            receipt = scope_restore(principal=principal, file=file, scope=options["scope"], team=team, merge=options["merge"],
                                    progress=progress)
        written = ", ".join(f"{kind} {n}" for kind, n in receipt.written.items() if n) or "nothing new"
        skipped = sum(receipt.skipped.values())
        self.emit(options, receipt.as_dict(),
                  f"Restored into {'new ' if receipt.created else ''}scope {receipt.scope}: {written}"
                  + (f"; {skipped} rows present already" if skipped else "")
                  + "".join(f"; {r['rows']} rows removed again ({r['kind']} {r['reason']})" for r in receipt.reapplied)
                  + (f"; {receipt.tombstones_unmatched} erasures could not be checked (made with another SECRET_KEY)"
                     if receipt.tombstones_unmatched else "")
                  + f"; {receipt.documents} search documents indexed in {receipt.seconds:.1f} s.")
