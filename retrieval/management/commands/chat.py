import json
import sys

from accounts.permissions import Access, can
from memoryweb.errors import MemorywebError
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from retrieval.chat import chat_turn


class Command(MemorywebCommand):
    help = (
        "Talk to a scope's memory: statements are remembered, questions answered (a '?' or a question word tells them "
        "apart; /remember and /ask force either; /quit ends). Reads standard input, so it can be piped; with --json, "
        "one JSON object per reply."
    )

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument("--speaker", default="", help="your name in this memory (default: your user name)")

    def handle(self, *args, **options):
        principal = self.principal(options)
        scope = scope_get(principal, options["scope"], Access.READ)
        speaker = options["speaker"] or principal.user.username
        may_write = can(principal, scope, Access.WRITE)
        as_json = options["json"]
        interactive = sys.stdin.isatty() and not as_json
        if interactive:
            self.stdout.write(f"memoryweb chat — scope {scope.slug}, speaking as {speaker}. /ask, /remember, /quit.")
        while True:
            if interactive:
                self.stdout.write("> ", ending="")
                self.stdout.flush()
            line = sys.stdin.readline()
            if not line:
                break
            line = line.strip()
            if not line:
                continue
            if line in ("/quit", "/exit"):
                break
            try:
                reply, error = chat_turn(scope=scope, principal=principal, speaker=speaker, line=line, may_write=may_write), None
            except MemorywebError as exc:
                reply, error = None, exc.message
            if as_json:
                self.stdout.write(json.dumps({"input": line, "reply": reply, "error": error}))
                self.stdout.flush()
            else:
                self.stdout.write(reply if error is None else f"error: {error}")
