"""The base of the memory commands (`store`, `facts`, `recall`, `query`, `forget`): their
arguments and output live in `memoryweb/cli_memory.py`, shared with the remote runner."""

from django.core.management.base import CommandError

from memoryweb import cli_memory
from memoryweb.management.base import MemorywebCommand


class MemoryCommand(MemorywebCommand):
    name = ""  # the command's name in cli_memory.COMMANDS

    def add_command_arguments(self, parser) -> None:
        cli_memory.add_arguments(self.name, parser)

    def execute(self, *args, **options):
        # `memoryweb.cli.main` sends --url/--token to the server before Django starts; this is
        # for callers that reach the command another way (call_command).
        if options.get("url") or options.get("token"):
            code = cli_memory.dispatch(self.name, {"as_user": None, "json": False, **options})
            if code:
                raise CommandError("The server refused the command (see above).", returncode=code)
            return None
        return super().execute(*args, **options)

    def handle(self, *args, **options):
        data, text = self.local_output(options)
        self.emit(options, data, text)

    def local_output(self, options) -> tuple[dict, str]:
        raise NotImplementedError
