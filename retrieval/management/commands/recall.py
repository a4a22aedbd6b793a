from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from retrieval.render import items_text
from retrieval.services import recall


class Command(MemorywebCommand):
    help = "Find the memories (facts and episodes) that best match QUERY in a scope."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("query")
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument("--k", type=int, default=10, help="how many results (default 10)")
        parser.add_argument("--as-of", dest="as_of", help="as the memory stood on this date (YYYY-MM-DD)")
        parser.add_argument("--history", action="store_true", help="include superseded facts")
        parser.add_argument("--speaker", default="", help="who asks: 'I' and 'my' mean this person")

    def handle(self, *args, **options):
        scope = scope_get(self.principal(options), options["scope"], Access.READ)
        result = recall(
            scope=scope, query=options["query"], k=options["k"], as_of=options["as_of"], include_history=options["history"],
            speaker=options["speaker"],
        )
        header = f"time window: {result.window.phrase} ({result.window.as_dict()['start']} → {result.window.as_dict()['end']})\n" if result.window else ""
        self.emit(options, result.as_dict(), header + items_text(result.items))
