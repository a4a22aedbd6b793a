"""`memoryweb serve`: the listening socket its workers share, and a start that fails."""

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import uvicorn
from django.db import connection

from accounts.models import User
from memoryweb.management.commands.serve import listening_socket, server_config


def test_connections_to_the_workers_socket_turn_nagle_off():
    sock = listening_socket(uvicorn.Config("memoryweb.asgi:application", host="127.0.0.1", port=0, workers=2))
    assert sock.proto == socket.IPPROTO_TCP

    async def nodelay_of_an_accepted_connection() -> int:
        loop = asyncio.get_running_loop()
        seen = loop.create_future()

        class Report(asyncio.Protocol):
            def connection_made(self, transport):
                seen.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await loop.create_server(Report, sock=sock)
        _, writer = await asyncio.open_connection("127.0.0.1", sock.getsockname()[1])
        try:
            return await asyncio.wait_for(seen, 10)
        finally:
            writer.close()
            server.close()

    # Without it, each keep-alive response after the first waits ~40 ms for the client's delayed ACK.
    assert asyncio.run(nodelay_of_an_accepted_connection()) != 0


def serve_on_a_taken_port() -> subprocess.CompletedProcess:
    """`memoryweb serve` on the test database (migrated, so it gets as far as its port whatever
    MEMORYWEB_HOME holds: the first admin made, the checks passed) and a port already taken."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        env = {**os.environ, "EMBEDDER": "hash", "LLM_PROVIDER": "offline", "MEMORYWEB_WARM_UP": "false",
               "MEMORYWEB_DATABASE_NAME": connection.settings_dict["NAME"], "MEMORYWEB_LOCAL_ACCESS": "false"}
        return subprocess.run(
            [sys.executable, "-m", "memoryweb.cli", "serve", "--port", str(taken.getsockname()[1]), "--workers", "1", "--no-migrate"],
            capture_output=True, text=True, env=env, timeout=180,
        )


@pytest.mark.django_db(transaction=True)  # the server commits its first admin: flushed afterwards
def test_serve_exits_with_an_error_when_its_port_is_taken():
    result = serve_on_a_taken_port()
    assert result.returncode != 0
    assert "address already in use" in (result.stdout + result.stderr).lower()


@pytest.mark.django_db(transaction=True)
def test_a_server_the_suite_starts_leaves_the_homes_admin_password_alone(settings):
    User.objects.filter(is_superuser=True).delete()  # committed: the server must make its first admin
    home_file = settings.MEMORYWEB_HOME / "admin-password"
    before = home_file.read_bytes() if home_file.exists() else None
    serve_on_a_taken_port()
    assert User.objects.filter(is_superuser=True).exists()  # it made one, in the test database
    assert Path(os.environ["MEMORYWEB_ADMIN_PASSWORD_FILE"]).exists()
    assert (home_file.read_bytes() if home_file.exists() else None) == before


def test_the_server_runs_on_uvloop_and_httptools():
    import uvloop
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    config = server_config(host="127.0.0.1", port=0, workers=1)
    config.load()
    assert config.http_protocol_class is HttpToolsProtocol
    assert config.get_loop_factory() is uvloop.new_event_loop
