from django.utils import timezone

from accounts.calllog import CallOut, call_list, call_log_prune
from accounts.permissions import Access
from memoryweb.errors import InvalidInput
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from memories.services.ingest import parse_when


class Command(MemorywebCommand):
    help = "Show a scope's caller log (API and MCP calls), newest first, for admins of its team; or prune old calls."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", help="the scope whose calls to show")
        parser.add_argument("--limit", type=int, default=50, help="at most this many calls (default 50)")
        parser.add_argument("--since", help="only calls at or after this ISO date or date-time")
        parser.add_argument("--prune", action="store_true",
                            help="delete calls older than MEMORYWEB_CALL_LOG_DAYS and expired idempotency keys")

    def handle(self, *args, **options):
        if options["prune"]:
            counts = call_log_prune()
            self.emit(options, counts, f"Pruned {counts['calls']} call(s) and {counts['idempotency_keys']} idempotency key(s).")
            return
        if not options["scope"]:
            raise InvalidInput("Name the scope: memoryweb log --scope SLUG (or --prune).")
        if options["limit"] < 1:
            raise InvalidInput("--limit must be at least 1.")
        principal = self.principal(options)
        scope = scope_get(principal, options["scope"], Access.READ)
        since = parse_when(options["since"], now=timezone.now(), what="--since") if options["since"] else None
        calls = [CallOut.of(call) for call in call_list(principal=principal, scope=scope, since=since)[: options["limit"]]]
        lines = [
            f"{c.when:%Y-%m-%d %H:%M:%S} {c.door:<3} {c.status} {c.latency_ms:8.1f} ms  {c.operation}  "
            f"{c.user or '(anonymous)'}{' via ' + c.token if c.token else ''}"
            for c in calls
        ]
        self.emit(options, [c.as_dict() for c in calls], "\n".join(lines) if lines else f"No calls logged for scope {scope.slug!r}.")
