import sys

from django.conf import settings
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
        warnings = _vector_warnings() if checks[0].ok else []  # checks[0] is the database
        lines.extend(f"{'vectors':<9} WARN {w}" for w in warnings)
        self.emit(options, {"ok": not broken, "checks": [c.as_dict() for c in checks], "warnings": warnings}, "\n".join(lines))
        if broken:
            names = ", ".join(c.name for c in broken)
            if options["json"]:
                sys.exit(1)
            raise CommandError(f"broken: {names}")


def _vector_warnings() -> list[str]:
    """One line per model that scopes' vectors are on while another is configured, saying what to run."""
    from django.db.utils import ProgrammingError

    from retrieval.reindex import model_mismatches

    try:
        mismatches = model_mismatches()
    except ProgrammingError:  # not migrated yet: the database check's business
        return []
    by_model: dict[str, list[str]] = {}
    for row in mismatches:
        by_model.setdefault(row["model"], []).append(row["scope"])
    out = []
    for model, scopes in by_model.items():
        configured = mismatches[0]["configured"]
        which = f"scope {scopes[0]}" if len(scopes) == 1 else f"{len(scopes)} scopes ({', '.join(scopes[:5])}{' …' if len(scopes) > 5 else ''})"
        command = f"memoryweb reindex --model {settings.EMBEDDER}" + (f" --scope {scopes[0]}" if len(scopes) == 1 else "")
        out.append(f"{which}: vectors made with {model}, but EMBEDDER is {settings.EMBEDDER} ({configured}); recall keeps using"
                   f" {model} for {'it' if len(scopes) == 1 else 'them'} until you run `{command}`.")
    return out
