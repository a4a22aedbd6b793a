from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from retrieval.heal import heal


class Command(MemorywebCommand):
    help = "Queue again background work that was lost: stuck extractions, missing vectors, a search index behind."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", help="only this scope (default: every scope)")

    def handle(self, *args, **options):
        scope = scope_get(self.principal(options), options["scope"], Access.WRITE) if options["scope"] else None
        report = heal(scope=scope)
        counts = report.as_dict()
        lines = [f"{name.replace('_', ' ')}: {count}" for name, count in counts.items()]
        text = "\n".join(lines) if report.total else "Nothing to heal."
        self.emit(options, counts, text)
