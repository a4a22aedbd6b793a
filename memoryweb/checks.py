"""Health checks shared by `memoryweb config`, `serve` and `GET /healthz`."""

from dataclasses import asdict, dataclass
from urllib.parse import urlparse

from django.conf import settings


@dataclass
class Check:
    name: str
    ok: bool
    summary: str  # what is in force
    detail: str = ""  # why it failed, in one sentence

    def as_dict(self) -> dict:
        return asdict(self)


def _redact(url: str) -> str:
    parsed = urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@")
    return url


def _database_location() -> str:
    if settings.DATABASE_EMBEDDED:
        return f"embedded ({settings.MEMORYWEB_HOME / 'pgdata'})"
    db = settings.DATABASES["default"]
    return f"postgresql://{db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}/{db.get('NAME')}"


def database_unreachable(exc: Exception) -> str:
    """One sentence for a database that does not answer (said by `config`, and by any command that meets it)."""
    text = str(exc).strip()
    reason = text.splitlines()[0] if text else exc.__class__.__name__
    return f"PostgreSQL at {_database_location()} is unreachable: {reason}"


def check_database() -> Check:
    from django.db import connection

    where = _database_location()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            server = cursor.fetchone()[0]
            cursor.execute("SELECT extname, extversion FROM pg_extension WHERE extname IN ('vector', 'pg_trgm')")
            extensions = dict(cursor.fetchall())
            cursor.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
            available = cursor.fetchone()
    except Exception as exc:
        return Check("database", False, where, database_unreachable(exc))
    vector = extensions.get("vector") or (f"{available[0]} (available, not yet created: run migrate)" if available else None)
    summary = f"{where}, PostgreSQL {server}, pgvector {vector or 'missing'}"
    if vector is None:
        return Check("database", False, summary, "The pgvector extension is not installed on this PostgreSQL server.")
    return Check("database", True, summary)


def check_broker() -> Check:
    if not settings.REDIS_URL:
        return Check("broker", True, "none: Celery tasks run eagerly in-process")
    import redis

    url = _redact(settings.REDIS_URL)
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
        client.ping()
    except Exception as exc:
        return Check("broker", False, f"Redis at {url}", f"Redis at {url} is unreachable ({exc.__class__.__name__}: {exc}).")
    return Check("broker", True, f"Redis at {url} (reachable)")


def check_llm() -> Check:
    from memoryweb.providers.llm import describe_llm

    ok, summary, detail = describe_llm()
    return Check("llm", ok, summary, detail)


def check_embedder() -> Check:
    from memoryweb.providers.embedders import describe_embedder

    ok, summary, detail = describe_embedder()
    return Check("embedder", ok, summary, detail)


def run_checks(*, deep: bool = True) -> list[Check]:
    """All checks. `deep=False` skips the ones that load models (for the load balancer's probe)."""
    checks = [check_database(), check_broker(), check_llm()]
    if deep:
        checks.append(check_embedder())
    return checks
