import sys

from django.core.management.base import CommandError

from memoryweb.checks import run_checks
from memoryweb.management.base import MemorywebCommand


class Command(MemorywebCommand):
    help = "Print the configuration in force (database, broker, LLM, embedder), check each piece, exit 1 if one is broken."
    acts_as_user = False

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--quick", action="store_true", help="skip loading the embedding model")

    def handle(self, *args, **options):
        checks = run_checks(deep=not options["quick"])
        broken = [c for c in checks if not c.ok]
        lines = []
        for check in checks:
            lines.append(f"{check.name:<9} {'ok  ' if check.ok else 'FAIL'} {check.summary}")
            if check.detail:
                lines.append(f"{'':<14} {check.detail}")
        self.emit(options, {"ok": not broken, "checks": [c.as_dict() for c in checks]}, "\n".join(lines))
        if broken:
            names = ", ".join(c.name for c in broken)
            if options["json"]:
                sys.exit(1)
            raise CommandError(f"broken: {names}")
