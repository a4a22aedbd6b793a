"""A base for memoryweb's CLI commands: domain errors become one-line errors with exit code 1,
`--as USER` picks the local user the command acts as (and is audited as), `--json` for machines."""

import argparse
import json
import sys

from django.core.management.base import BaseCommand, CommandError
from django.db.utils import OperationalError, ProgrammingError
from psycopg.errors import UndefinedColumn, UndefinedTable

from memoryweb.errors import MemorywebError


class MemorywebCommand(BaseCommand):
    acts_as_user = True

    def add_arguments(self, parser) -> None:
        if self.acts_as_user:
            parser.add_argument("--as", dest="as_user", metavar="USER", help="act as this local user (default: the first admin)")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        self.add_command_arguments(parser)

    def add_command_arguments(self, parser) -> None:
        pass

    def add_subcommands(self, parser):
        """Subcommands that also accept the common options after their name (`scope list --json`)."""
        command = self
        subparsers = parser.add_subparsers(dest="action", required=True)
        add_parser = subparsers.add_parser

        def add_with_common(name, **kwargs):
            sub = add_parser(name, **kwargs)
            # SUPPRESS: an option given before the subcommand is not reset by the subparser's default.
            if command.acts_as_user:
                sub.add_argument("--as", dest="as_user", metavar="USER", default=argparse.SUPPRESS)
            sub.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
            return sub

        subparsers.add_parser = add_with_common
        return subparsers

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except MemorywebError as exc:
            raise CommandError(exc.message) from None
        except ProgrammingError as exc:
            if isinstance(exc.__cause__, UndefinedTable):
                raise CommandError("The database has no memoryweb tables yet: run `memoryweb migrate` first.") from None
            if isinstance(exc.__cause__, UndefinedColumn):
                raise CommandError("The database is older than this memoryweb: run `memoryweb migrate` first.") from None
            raise
        except OperationalError as exc:
            from memoryweb.checks import database_unreachable

            raise CommandError(database_unreachable(exc) + ".") from None

    def principal(self, options):
        from accounts.permissions import Principal
        from accounts.services import cli_user

        return Principal(user=cli_user(options.get("as_user")))

    def emit(self, options, data, text: str) -> None:
        if options.get("json"):
            sys.stdout.write(json.dumps(data, default=str, indent=2) + "\n")
        else:
            self.stdout.write(text)
