"""The `memoryweb` console script: Django's management commands with memoryweb's settings.

Configuration errors (a malformed DATABASE_URL, a bad boolean, an embedded database that
cannot start) and a database that does not answer are printed as one sentence, not a traceback.
`memoryweb --help` lists memoryweb's own commands, grouped; `memoryweb help --django` lists all.
The memory commands go to a server first when one is meant or running (`memoryweb/cli_memory.py`).
"""

import os
import re
import sys

# Known commands by group, in the order shown; any other memoryweb command is listed under "other".
# Names that are not installed (yet) are skipped, so the list always matches what runs.
COMMAND_GROUPS = {
    "memory": ["store", "ingest", "facts", "retry", "merge", "recall", "query", "chat", "forget", "erase", "history"],
    "admin": ["user", "team", "token", "scope", "log", "config", "serve", "worker", "beat", "mcp"],
    "operations": ["bench", "eval", "heal", "migrate", "backup", "restore", "dedup", "consolidate", "reindex"],
}
# The memory commands that can run through a server (memoryweb/cli_memory.py: COMMANDS).
REMOTE_COMMANDS = ("store", "facts", "recall", "query", "forget")
_OUR_APPS = {"memoryweb", "accounts", "memories", "retrieval"}


def _one_line(text: str, width: int = 76) -> str:
    """The first sentence of a command's help, without its asides when too long, at most `width` characters."""
    line = re.split(r"(?<=\.)\s", " ".join((text or "").split()), maxsplit=1)[0].rstrip(".")
    if len(line) > width:
        line = re.sub(r"\s*\([^)]*\)", "", line)
    return line if len(line) <= width else line[: width - 1].rsplit(" ", 1)[0] + "…"


def project_help_text(prog: str = "memoryweb") -> str:
    from django.core.management import get_commands, load_command_class

    commands = get_commands()
    ours = sorted(name for name, app in commands.items() if app in _OUR_APPS)
    known = {name for names in COMMAND_GROUPS.values() for name in names}
    groups = {group: [n for n in names if n in commands] for group, names in COMMAND_GROUPS.items()}
    groups["other"] = [n for n in ours if n not in known]
    lines = [f"Usage: {prog} COMMAND [options]   ({prog} COMMAND --help for a command's options)"]
    for group, names in groups.items():
        if not names:
            continue
        lines += ["", f"{group}:"]
        for name in names:
            lines.append(f"  {name:<12} {_one_line(load_command_class(commands[name], name).help)}")
    lines += ["", f"Django's own commands (shell, dbshell, createsuperuser, …) are listed by `{prog} help --django`."]
    return "\n".join(lines)


def _utility(argv: list[str]):
    from django.core.management import ManagementUtility

    class Utility(ManagementUtility):
        def main_help_text(self, commands_only: bool = False) -> str:
            if commands_only or "--django" in self.argv or self.settings_exception is not None:
                return super().main_help_text(commands_only)
            return project_help_text(self.prog_name)

    return Utility(argv)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv if argv is None else argv)
    argv[0] = "memoryweb"
    if len(argv) > 1 and argv[1] in REMOTE_COMMANDS:
        # Before Django: through a server (--url/--token, or a local `serve`), nothing of Django's
        # models, the embedded database or the embedding model is loaded (cli_memory.py).
        from memoryweb.cli_memory import run

        code = run(argv[1], argv[2:])
        if code is not None:
            sys.exit(code)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.db.utils import OperationalError

    try:
        _utility(argv).execute()
    except ImproperlyConfigured as exc:
        print(f"memoryweb: configuration error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OperationalError as exc:  # Django's own commands (migrate, …); ours say it in MemorywebCommand
        from memoryweb.checks import database_unreachable

        print(f"memoryweb: {database_unreachable(exc)}.", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
