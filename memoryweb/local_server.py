"""How a running `memoryweb serve` tells the CLI on the same machine where it is.

`serve` writes `$MEMORYWEB_HOME/server.json` (or `MEMORYWEB_SERVER_FILE`), mode 0600: its URL,
its pid, which database it serves, and local tokens of the CLI user (one read-only over the
scopes that user may read, one read+write over those they may write). It removes the file when it
stops. The CLI's memory commands read it and, when it fits their database, user and scope, ask
that server instead of loading Django and the embedding model themselves.

Whoever can read the file can already read `MEMORYWEB_HOME` itself (the database files, the
secret key) and act as any local user with `--as`, so it grants no one anything new.

Infrastructure only, and light: the CLI reads it before Django is set up.
"""

import hashlib
import json
import os
from pathlib import Path

from memoryweb.secrets_file import write_secret_file

READ, WRITE = "read", "write"


def memoryweb_home() -> Path:
    """MEMORYWEB_HOME as the settings read it (default: `var/` beside the project)."""
    default = Path(__file__).resolve().parent.parent / "var"
    return Path(os.environ.get("MEMORYWEB_HOME", "").strip() or default).expanduser().resolve()


def server_file() -> Path:
    override = os.environ.get("MEMORYWEB_SERVER_FILE", "").strip()
    return Path(override).expanduser() if override else memoryweb_home() / "server.json"


def database_identity() -> str:
    """Which database this process's environment selects, without connecting (a hash: the URL may hold a password)."""
    selected = f"{os.environ.get('DATABASE_URL', '').strip()}|{os.environ.get('MEMORYWEB_DATABASE_NAME', '').strip()}"
    return hashlib.sha256(f"{memoryweb_home()}|{selected}".encode()).hexdigest()[:16]


def advertise(info: dict) -> None:
    """Write the file whole and 0600 from the first byte, replacing an older one atomically."""
    path = server_file()
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    staging.unlink(missing_ok=True)
    write_secret_file(staging, json.dumps(info, indent=2))
    os.replace(staging, path)


def withdraw(pid: int) -> None:
    """Remove the file if it is still this server's (another serve may have written its own since)."""
    info = read_raw()
    if info is not None and info.get("pid") == pid:
        server_file().unlink(missing_ok=True)


def read_raw() -> dict | None:
    try:
        info = json.loads(server_file().read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def local_access(*, user: str | None, scope: str, access: str) -> tuple[str, str] | None:
    """(url, token) of the running local server for acting as `user` (None: the CLI's default user)
    on `scope` with `access`, or None when no server on this database can do it."""
    info = read_raw()
    if info is None or info.get("database") != database_identity():
        return None
    wanted = user or os.environ.get("MEMORYWEB_CLI_USER", "").strip()
    if wanted != info.get("user") and not (not wanted and info.get("default_user")):
        return None
    grant = (info.get("tokens") or {}).get(access) or {}
    if scope not in grant.get("scopes", []) or not grant.get("token"):
        return None
    return info["url"], grant["token"]
