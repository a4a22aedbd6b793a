from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from retrieval.services import subject_erase


class Command(MemorywebCommand):
    help = (
        "Erase a person from a scope: what they said or what names them, every fact about them, their entity and aliases,"
        " from the memory and the search index (team admins only)."
    )

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument(
            "--subject", required=True, metavar="NAME", help="the person: a name or alias exactly as the memory knows it, or an entity id",
        )
        parser.add_argument("--dry-run", action="store_true", help="count what would be erased, and write nothing")

    def handle(self, *args, **options):
        principal = self.principal(options)
        # Reading is enough to find the scope; the service decides whether this principal may erase.
        scope = scope_get(principal, options["scope"], Access.READ)
        receipt = subject_erase(principal=principal, scope=scope, subject=options["subject"], dry_run=options["dry_run"])
        counts = ", ".join(f"{kind} {n}" for kind, n in receipt.counts.items() if n) or "nothing"
        # The terminal may show the name the admin typed; the receipt and the audit log never hold it.
        if receipt.dry_run:
            text = f"Would erase {options['subject']!r} from {receipt.scope} (dry run, nothing written): {counts}."
        else:
            text = f"Erased {options['subject']!r} from {receipt.scope} (erasure {receipt.erasure_id}): {counts}."
        self.emit(options, receipt.as_dict(), text)
