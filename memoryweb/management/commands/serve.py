import ipaddress
import os
import socket
import sys

from django.conf import settings
from django.db import connections
from django.core.management import call_command
from django.core.management.base import CommandError

from memoryweb.checks import check_broker, check_database
from memoryweb.management.local_access import local_access
from memoryweb.management.base import MemorywebCommand
from memoryweb.warmup import native_threads_limit


class Command(MemorywebCommand):
    help = "Migrate, make sure an admin exists, and serve the ASGI app (uvicorn)."
    acts_as_user = False

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--workers", type=int, default=settings.MEMORYWEB_WORKERS, metavar="N",
            help=f"worker processes (default MEMORYWEB_WORKERS, else one per core, at most 4: {settings.MEMORYWEB_WORKERS} here)",
        )
        parser.add_argument("--no-migrate", action="store_true")
        parser.add_argument(
            "--db-pool", type=int, default=None, metavar="N",
            help="Keep up to N warm database connections per worker process (default: DB_POOL_SIZE, else 16; "
                 "0: a new connection per request; off when DB_CONN_MAX_AGE is set).",
        )

    def handle(self, *args, **options):
        from accounts.services import admin_password_file, local_admin_ensure

        native_threads_limit()  # before the checks or migrations could load PyTorch (memoryweb/warmup.py)
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1.")
        if settings.DEBUG and not is_loopback(options["host"]):
            raise CommandError(
                f"DEBUG is on, so memoryweb serves only this machine (--host 127.0.0.1, ::1 or localhost), "
                f"not {options['host']!r}: its error pages would show settings and code to anyone; unset DEBUG to serve others."
            )
        for check in (check_database(), check_broker()):
            if not check.ok:
                raise CommandError(check.detail)
        if not options["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        admin, password = local_admin_ensure()
        _use_db_pool(options["db_pool"])
        url = f"http://{options['host']}:{options['port']}"
        out = sys.stdout
        out.write(f"memoryweb at {url}  (database: {'embedded' if settings.DATABASE_EMBEDDED else 'DATABASE_URL'}, "
                  f"tasks: {'Redis + worker' if settings.REDIS_URL else _in_process()}, workers: {options['workers']})\n")
        password_file = admin_password_file()
        if password:
            out.write(f"First run: created admin account '{admin.username}' with password: {password}\n")
        out.write(f"Open {url}/ and log in as {admin.username}")
        out.write(f" (password in {password_file})" if password_file.exists() else "")
        out.write(f"; the operators' admin is at {url}/admin/.\n")
        out.flush()
        # The CLI on this machine uses this server while it runs (local_access.py); 0.0.0.0 is reached on 127.0.0.1.
        local_url = f"http://{'127.0.0.1' if options['host'] in ('0.0.0.0', '::', '') else options['host']}:{options['port']}"
        with local_access(local_url):
            _run(host=options["host"], port=options["port"], workers=options["workers"])


def _in_process() -> str:
    return "in-process, on background threads" if settings.MEMORYWEB_BACKGROUND else "in-process, in the request"


def is_loopback(host: str) -> bool:
    """True for an address (or `localhost`) that only this machine reaches."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def server_config(*, host: str, port: int, workers: int):
    """uvicorn's configuration of the app. The loop and the HTTP parser are uvloop and httptools
    (dependencies; uvicorn's "auto" picks them when installed): about 1 ms less CPU per API
    request than asyncio's loop and h11. The MCP session manager runs in the lifespan (asgi.py)."""
    import uvicorn

    return uvicorn.Config("memoryweb.asgi:application", host=host, port=port, workers=workers, log_level="info", lifespan="on",
                          loop="auto", http="auto")


def _run(*, host: str, port: int, workers: int) -> None:
    """uvicorn.run, but with several workers the listening socket comes from `listening_socket`."""
    import uvicorn
    from uvicorn.main import STARTUP_FAILURE
    from uvicorn.supervisors import Multiprocess

    config = server_config(host=host, port=port, workers=workers)
    try:
        if workers > 1:
            Multiprocess(config, sockets=[listening_socket(config)]).run()
            return
        server = uvicorn.Server(config)
        server.run()  # asyncio binds the socket itself, from getaddrinfo: IPPROTO_TCP
    except KeyboardInterrupt:
        return
    if not server.started:  # the port is taken, or the app failed to load: uvicorn logged why
        sys.exit(STARTUP_FAILURE)


def listening_socket(config) -> socket.socket:
    """The socket the supervisor hands its workers, saying IPPROTO_TCP. uvicorn (0.54) binds it
    with protocol 0; accepted connections inherit that, and asyncio turns Nagle's algorithm off
    (TCP_NODELAY) only on sockets that say TCP, so every keep-alive response after the first
    waited ~40 ms for the client's delayed ACK: at one client, two workers answered recall in
    108–135 ms where one answered in 75 (uvicorn issue #3149)."""
    bound = config.bind_socket()
    sock = socket.socket(fileno=bound.detach())  # family, type and protocol read back from the kernel
    sock.set_inheritable(True)
    return sock


def _use_db_pool(size: int | None) -> None:
    """Serve with a connection pool of `size` (settings.DB_POOL_SIZE): here, once the connections
    the checks and migrations opened are closed, and in the worker processes uvicorn starts, which
    read it from the environment."""
    if size is None:
        size = settings.DB_POOL_SIZE or (0 if settings.DB_CONN_MAX_AGE else 16)
    if size < 0:
        raise CommandError("--db-pool must be 0 or more.")
    if size and settings.DB_CONN_MAX_AGE:
        raise CommandError("--db-pool and DB_CONN_MAX_AGE exclude each other: unset DB_CONN_MAX_AGE or pass --db-pool 0.")
    os.environ["DB_POOL_SIZE"] = str(size)
    connections.close_all()
    options = settings.DATABASES["default"].setdefault("OPTIONS", {})
    if size:
        options["pool"] = {**settings.DB_POOL_OPTIONS, "max_size": size}
    else:
        options.pop("pool", None)
