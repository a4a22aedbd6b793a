import os
import sys
from contextlib import contextmanager

import anyio
from django.core.management.base import CommandError

from memoryweb.management.base import MemorywebCommand


class Command(MemorywebCommand):
    help = (
        "Serve memoryweb's MCP tools over stdio, for a local MCP client (Claude Desktop, VS Code), acting as a local "
        "user (--as USER, default the first admin) or through an API token (--token, or MEMORYWEB_TOKEN). "
        "Standard output carries nothing but the protocol; logs go to standard error."
    )

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--token", default=None, help="act through this API token (mw_…), within its scopes and rights")

    def handle(self, *args, **options):
        with _stdout_to_stderr():  # while Django connects (and may start the embedded database)
            principal = self._principal(options)
        anyio.run(_serve, principal)

    def _principal(self, options):
        from accounts.permissions import Principal
        from accounts.tokens import token_authenticate

        raw = options["token"] or os.environ.get("MEMORYWEB_TOKEN")
        if raw and options.get("as_user"):
            raise CommandError("Give --as USER or --token, not both.")
        if not raw:
            return self.principal(options)
        token = token_authenticate(raw)
        if token is None:
            raise CommandError("The API token is not valid (wrong, revoked or expired).")
        return Principal.for_token(token)


@contextmanager
def _stdout_to_stderr():
    """Point file descriptor 1 at stderr, so nothing but the protocol reaches the client: not a
    stray print, not a library's progress bar, not a child process's output. (While serving, the
    SDK's stdio transport does the same, writing the protocol to a private copy of fd 1.)"""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(wire, 1)
        os.close(wire)


async def _serve(principal) -> None:
    from memoryweb.mcp import current_principal, server

    current_principal.set(principal)  # the SDK passes this task's context on to every tool call
    await server.run_stdio_async()
