"""Settings, all from the environment (see .env.example). Local defaults just work:
an embedded PostgreSQL under MEMORYWEB_HOME and Celery tasks run in-process."""

import os
import secrets
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from memoryweb.env import env_bool, env_choice, env_float, env_int, env_list, env_rate, env_str, require_ascending
from memoryweb.secrets_file import write_secret_file

BASE_DIR = Path(__file__).resolve().parent.parent
MEMORYWEB_HOME = Path(env_str("MEMORYWEB_HOME", str(BASE_DIR / "var"))).expanduser().resolve()

# DEBUG is off unless the operator turns it on (DEBUG=true, for development only): with it on a
# 404 or a 500 shows settings, paths and the URL table, so `serve` then listens on loopback only.
DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept in
    $MEMORYWEB_HOME/secret_key (mode 0600, like the admin password), so a fresh machine starts
    with nothing set and sessions survive restarts."""
    key = env_str("SECRET_KEY")
    if key:
        return key
    path = MEMORYWEB_HOME / "secret_key"
    if path.exists():
        return path.read_text().strip()
    return write_secret_file(path, secrets.token_urlsafe(50)).strip()


SECRET_KEY = _secret_key()
# The local start (http://127.0.0.1:8000) works with nothing set; a deployment names its hosts.
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "memoryweb.admin_site.OperatorAdminConfig",  # django.contrib.admin, for active superusers only
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "template_partials",  # {% partialdef %}: a page and its htmx fragments in one template
    "memoryweb",
    "accounts",
    "memories",
    "retrieval",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memoryweb.middleware.SyncChain",  # last: the chain runs on one thread under ASGI (it says why)
]

ROOT_URLCONF = "memoryweb.urls"
WSGI_APPLICATION = "memoryweb.wsgi.application"
ASGI_APPLICATION = "memoryweb.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memories.pages.header",
            ],
        },
    },
]


# Database: DATABASE_URL, or the embedded PostgreSQL. DB_CONN_MAX_AGE seconds a connection is
# kept for reuse (checked first). 0 by default: `memoryweb serve` borrows from a pool instead
# (DB_POOL_SIZE), and Django's ASGI handler, which starts a thread per request, would never reuse
# a kept one; a worker or a WSGI deployment may raise it.
DB_CONN_MAX_AGE = env_int("DB_CONN_MAX_AGE", 0, minimum=0)
# DB_POOL_SIZE: the most connections a process keeps open in a psycopg pool (Django's pooling), so
# a request borrows a warm connection instead of opening one (a new PostgreSQL backend costs
# milliseconds and starts with cold caches). 0 (the default): no pool; `memoryweb serve` turns it
# on for the server (its --db-pool). Pooling and DB_CONN_MAX_AGE exclude each other.
DB_POOL_SIZE = env_int("DB_POOL_SIZE", 0, minimum=0)
# `memoryweb serve`'s worker processes (its --workers): one per core this process may run on, at
# most 4. One process's Python runs one thread at a time (the GIL), so a single worker cannot use
# a second core; each worker holds its own copy of the embedding model (about 0.7 GB with the
# local one), hence the cap. Measured on two cores in docs/ARCHITECTURE.md ("bench api").
MEMORYWEB_WORKERS = env_int("MEMORYWEB_WORKERS", min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 4), minimum=1)
# MEMORYWEB_HTTP_THREADS: the threads of a server process that run Django's requests (asgi.py
# serves Django through its WSGI handler on a pool of them). A request beyond them waits for one.
# They only need to cover the requests that wait rather than compute (a remote LLM's answer, an
# extraction without a broker): one process's Python runs one thread at a time, so more threads
# than that add no throughput. 16 by default, the size of `serve`'s database pool, so a request
# thread seldom waits for a connection.
MEMORYWEB_HTTP_THREADS = env_int("MEMORYWEB_HTTP_THREADS", 16, minimum=1)
if DB_POOL_SIZE and DB_CONN_MAX_AGE:
    raise ImproperlyConfigured("DB_POOL_SIZE and DB_CONN_MAX_AGE exclude each other: a pooled connection goes back to the pool after each request.")
# A pool's other options (psycopg_pool.ConnectionPool): one connection kept warm, a borrower waits
# at most 30 s, an idle connection beyond the first is closed after 5 minutes.
DB_POOL_OPTIONS = {"min_size": 1, "timeout": 30, "max_idle": 300}


def _database() -> dict:
    url = env_str("DATABASE_URL")
    if url:
        try:
            config = dj_database_url.parse(url, conn_max_age=DB_CONN_MAX_AGE, conn_health_checks=True)
        except Exception as exc:  # dj-database-url raises several exception types for bad input
            raise ImproperlyConfigured(
                f"DATABASE_URL is malformed ({str(exc).split('.')[0]}): expected postgres://USER:PASSWORD@HOST:PORT/NAME."
            ) from None
        if config.get("ENGINE") != "django.db.backends.postgresql" or not config.get("NAME"):
            raise ImproperlyConfigured(
                "DATABASE_URL must point at a PostgreSQL database, like postgres://USER:PASSWORD@HOST:5432/NAME."
            )
        if DB_POOL_SIZE:
            config.setdefault("OPTIONS", {})["pool"] = {**DB_POOL_OPTIONS, "max_size": DB_POOL_SIZE}
        return config
    from memoryweb.embedded_db import DATABASE_NAME, ensure_server

    try:
        params = ensure_server(MEMORYWEB_HOME)
    except Exception as exc:
        raise ImproperlyConfigured(
            f"The embedded PostgreSQL under {MEMORYWEB_HOME / 'pgdata'} could not start ({exc.__class__.__name__}: {exc}); "
            "see its log file there, or set DATABASE_URL."
        ) from None
    return {
        "ENGINE": "django.db.backends.postgresql",
        # MEMORYWEB_DATABASE_NAME lets a worker started by a test use pytest-django's test database.
        "NAME": env_str("MEMORYWEB_DATABASE_NAME", DATABASE_NAME),
        **params,
        "CONN_MAX_AGE": DB_CONN_MAX_AGE,
        "CONN_HEALTH_CHECKS": True,
        **({"OPTIONS": {"pool": {**DB_POOL_OPTIONS, "max_size": DB_POOL_SIZE}}} if DB_POOL_SIZE else {}),
    }


DATABASE_EMBEDDED = not env_str("DATABASE_URL")
DATABASES = {"default": _database()}
# Parallel test runs on one server each need their own test database.
DATABASES["default"]["TEST"] = {"NAME": env_str("MEMORYWEB_TEST_DB_NAME", "test_memoryweb")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# The pages' own login (the admin keeps its own, for superusers).
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "scopes"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = MEMORYWEB_HOME / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True  # serve straight from the finders, so `serve` needs no collectstatic

# X-Forwarded-Proto (and X-Forwarded-For, for the sign-in limits: accounts/lockout.py) are
# trusted only behind a proxy that sets them: anyone can send the headers.
MEMORYWEB_BEHIND_PROXY = env_bool("MEMORYWEB_BEHIND_PROXY", False)
if MEMORYWEB_BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# MEMORYWEB_HTTPS: clients reach memoryweb over TLS (a proxy in front, or the Docker image), so
# plain HTTP is redirected, browsers are told to keep to HTTPS (HSTS) and the cookies are sent over
# TLS only. Off by default so that the local start on http://127.0.0.1:8000 works; true by default
# behind a proxy. These pass `memoryweb check --deploy` (tests/foundation/test_security_defaults.py).
MEMORYWEB_HTTPS = env_bool("MEMORYWEB_HTTPS", MEMORYWEB_BEHIND_PROXY)
if MEMORYWEB_HTTPS:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = MEMORYWEB_HTTPS
CSRF_COOKIE_SECURE = MEMORYWEB_HTTPS
# Cookies: neither readable from scripts (the pages send the CSRF token from <body hx-headers>,
# STYLE.md, never from the cookie), neither sent on cross-site subrequests or posts.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# SecurityMiddleware's headers on every response (the Content-Security-Policy is the middleware's).
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Failed sign-ins (accounts/lockout.py): after MEMORYWEB_LOGIN_FAILURES failures within
# MEMORYWEB_LOGIN_WINDOW_MINUTES for one account or from one client address, that account or
# address is refused (429) until the window has passed over them; a success clears them. Bad API
# tokens (the API and MCP over HTTP) are counted per address the same way. Counted in the
# database, so every process shares the count.
MEMORYWEB_LOGIN_FAILURES = env_int("MEMORYWEB_LOGIN_FAILURES", 10, minimum=1)
MEMORYWEB_LOGIN_WINDOW_MINUTES = env_int("MEMORYWEB_LOGIN_WINDOW_MINUTES", 15, minimum=1)

# Celery: eager in-process without a broker; Redis and a worker with REDIS_URL.
REDIS_URL = env_str("REDIS_URL")
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE
# Time limits, each strictly smaller than the next, so every stage can trust the one before:
# - a task's soft limit: it stops, and an extraction marks its episode failed with the reason
#   (an indexing run keeps what it wrote and retries later);
# - its hard limit: the worker kills it, leaving the episode 'processing';
# - the stale-claim window: an episode claimed longer ago than this is presumed abandoned (no live
#   task can still hold it, by the hard limit) and may be claimed again by any task, re-queued by
#   the healing task or retried by a person;
# - the broker's visibility timeout (Redis): a message a worker took but never acknowledged is
#   handed to another worker, whose task then finds the claim stale rather than live.
MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT = env_int("MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT", 5 * 60, minimum=1)
MEMORYWEB_EXTRACT_TIME_LIMIT = env_int("MEMORYWEB_EXTRACT_TIME_LIMIT", 6 * 60, minimum=1)
MEMORYWEB_INDEX_SOFT_TIME_LIMIT = env_int("MEMORYWEB_INDEX_SOFT_TIME_LIMIT", 10 * 60, minimum=1)
MEMORYWEB_INDEX_TIME_LIMIT = env_int("MEMORYWEB_INDEX_TIME_LIMIT", 11 * 60, minimum=1)
MEMORYWEB_EXTRACT_STALE_SECONDS = env_int("MEMORYWEB_EXTRACT_STALE_SECONDS", 15 * 60, minimum=1)
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 60 * 60, minimum=1)
require_ascending(
    ("MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT", MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT),
    ("MEMORYWEB_EXTRACT_TIME_LIMIT", MEMORYWEB_EXTRACT_TIME_LIMIT),
    ("MEMORYWEB_EXTRACT_STALE_SECONDS", MEMORYWEB_EXTRACT_STALE_SECONDS),
    ("CELERY_VISIBILITY_TIMEOUT", CELERY_VISIBILITY_TIMEOUT),
)
require_ascending(
    ("MEMORYWEB_INDEX_SOFT_TIME_LIMIT", MEMORYWEB_INDEX_SOFT_TIME_LIMIT),
    ("MEMORYWEB_INDEX_TIME_LIMIT", MEMORYWEB_INDEX_TIME_LIMIT),
    ("MEMORYWEB_EXTRACT_STALE_SECONDS", MEMORYWEB_EXTRACT_STALE_SECONDS),
)
# Every CELERY_UNACKED_RESTORE_SECONDS each worker puts back on the queue the messages left
# unacknowledged longer than the visibility timeout (their worker died), for any worker to take.
# (Left to kombu, that sweep would run only about every 100 s.)
CELERY_UNACKED_RESTORE_SECONDS = env_int("CELERY_UNACKED_RESTORE_SECONDS", 60, minimum=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
    "unacked_restore_interval": CELERY_UNACKED_RESTORE_SECONDS,
    "unacked_restore_throttle": 1,  # every sweep scans (kombu's default: one in ten)
}
# Healing (retrieval/heal.py), every MEMORYWEB_HEAL_INTERVAL_SECONDS from Celery beat: episodes
# pending longer than MEMORYWEB_HEAL_PENDING_SECONDS (their message was lost) are queued again.
# A run not started within one interval expires, so a stopped worker does not pile them up.
MEMORYWEB_HEAL_PENDING_SECONDS = env_int("MEMORYWEB_HEAL_PENDING_SECONDS", 5 * 60, minimum=1)
MEMORYWEB_HEAL_INTERVAL_SECONDS = env_int("MEMORYWEB_HEAL_INTERVAL_SECONDS", 5 * 60, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "heal": {
        "task": "retrieval.heal",
        "schedule": float(MEMORYWEB_HEAL_INTERVAL_SECONDS),
        "options": {"expires": float(MEMORYWEB_HEAL_INTERVAL_SECONDS)},
    },
    # The caller log and expired idempotency keys, pruned hourly (accounts/calllog.py).
    "prune-call-log": {"task": "accounts.prune_call_log", "schedule": 3600.0, "options": {"expires": 3600.0}},
}
# One beat schedules for the fleet (memoryweb/beat_scheduler.py): the leader's lock in Redis expires
# after MEMORYWEB_BEAT_LOCK_SECONDS unless renewed, and a standing-by beat then takes over.
MEMORYWEB_BEAT_LOCK_SECONDS = env_int("MEMORYWEB_BEAT_LOCK_SECONDS", 30, minimum=1)
# Scheduled backups (retrieval/backup.py): every MEMORYWEB_BACKUP_INTERVAL_HOURS (0, the default:
# off), each scope to $MEMORYWEB_HOME/backups/<slug>/<UTC time>.jsonl.gz, the newest
# MEMORYWEB_BACKUP_KEEP kept per scope.
MEMORYWEB_BACKUP_INTERVAL_HOURS = env_int("MEMORYWEB_BACKUP_INTERVAL_HOURS", 0, minimum=0)
MEMORYWEB_BACKUP_KEEP = env_int("MEMORYWEB_BACKUP_KEEP", 7, minimum=1)
if MEMORYWEB_BACKUP_INTERVAL_HOURS:
    CELERY_BEAT_SCHEDULE["backup-scopes"] = {
        "task": "retrieval.backup_scopes",
        "schedule": MEMORYWEB_BACKUP_INTERVAL_HOURS * 3600.0,
        "options": {"expires": MEMORYWEB_BACKUP_INTERVAL_HOURS * 3600.0},
    }
# Entity deduplication (memories/services/dedup.py). Pass 2 proposes two names whose pg_trgm
# similarity is at least DEDUP_TRIGRAM_SIMILARITY, pass 3 two entity-name vectors whose cosine is at
# least DEDUP_EMBEDDING_SIMILARITY (DESIGN.md's 0.88). Every night at DEDUP_HOUR_UTC (-1: never) the
# beat task records proposals for every scope and, unless DEDUP_AUTO_MERGE is off, merges those
# scoring at least DEDUP_AUTO_MERGE_SIMILARITY: at 1.0, the default, only pass 1's exact normalised
# matches (the fuzzy passes score at most 0.99).
DEDUP_TRIGRAM_SIMILARITY = env_float("DEDUP_TRIGRAM_SIMILARITY", 0.5)
DEDUP_EMBEDDING_SIMILARITY = env_float("DEDUP_EMBEDDING_SIMILARITY", 0.88)
DEDUP_AUTO_MERGE = env_bool("DEDUP_AUTO_MERGE", True)
DEDUP_AUTO_MERGE_SIMILARITY = env_float("DEDUP_AUTO_MERGE_SIMILARITY", 1.0)
DEDUP_HOUR_UTC = env_int("DEDUP_HOUR_UTC", 3, minimum=-1)
for _name in ("DEDUP_TRIGRAM_SIMILARITY", "DEDUP_EMBEDDING_SIMILARITY", "DEDUP_AUTO_MERGE_SIMILARITY"):
    if not 0 < globals()[_name] <= 1:
        raise ImproperlyConfigured(f"{_name} must be above 0 and at most 1, not {globals()[_name]}.")
if DEDUP_HOUR_UTC > 23:
    raise ImproperlyConfigured(f"DEDUP_HOUR_UTC must be an hour from 0 to 23 (or -1: never), not {DEDUP_HOUR_UTC}.")
if DEDUP_HOUR_UTC >= 0:
    CELERY_BEAT_SCHEDULE["dedup-scopes"] = {
        "task": "memories.dedup_scopes",
        "schedule": crontab(hour=DEDUP_HOUR_UTC, minute=15),
        "options": {"expires": 3600.0},  # not started within the hour: tomorrow's run does it
    }
# Consolidation (memories/services/consolidate.py): episodes that happened more than
# CONSOLIDATION_AGE_DAYS ago with importance below CONSOLIDATION_IMPORTANCE_CAP (NULL: never) become
# summary episodes, at most CONSOLIDATION_BATCH_SIZE originals each; Celery beat runs it over every
# scope each night at CONSOLIDATION_HOUR (UTC) unless CONSOLIDATION_NIGHTLY is false.
CONSOLIDATION_AGE_DAYS = env_int("CONSOLIDATION_AGE_DAYS", 90, minimum=1)
CONSOLIDATION_IMPORTANCE_CAP = env_float("CONSOLIDATION_IMPORTANCE_CAP", 0.3)
if not 0 < CONSOLIDATION_IMPORTANCE_CAP <= 1:
    raise ImproperlyConfigured(f"CONSOLIDATION_IMPORTANCE_CAP must be above 0 and at most 1, not {CONSOLIDATION_IMPORTANCE_CAP}.")
CONSOLIDATION_BATCH_SIZE = env_int("CONSOLIDATION_BATCH_SIZE", 50, minimum=3)
CONSOLIDATION_NIGHTLY = env_bool("CONSOLIDATION_NIGHTLY", True)
CONSOLIDATION_HOUR = env_int("CONSOLIDATION_HOUR", 3, minimum=0)
if CONSOLIDATION_HOUR > 23:
    raise ImproperlyConfigured(f"CONSOLIDATION_HOUR must be an hour from 0 to 23, not {CONSOLIDATION_HOUR}.")
if CONSOLIDATION_NIGHTLY:
    CELERY_BEAT_SCHEDULE["consolidate-scopes"] = {
        "task": "memories.consolidate_scopes",
        "schedule": crontab(minute=0, hour=CONSOLIDATION_HOUR),
        # Not started within a day (no worker): skipped, the next night's run does the work.
        "options": {"expires": 24 * 3600.0},
    }
# The limits reach the tasks as annotations (Celery sets them as task attributes), so the
# ladder is written once, here.
CELERY_TASK_ANNOTATIONS = {
    "memories.extract_episode": {"soft_time_limit": MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT, "time_limit": MEMORYWEB_EXTRACT_TIME_LIMIT},
    "retrieval.index_scope": {"soft_time_limit": MEMORYWEB_INDEX_SOFT_TIME_LIMIT, "time_limit": MEMORYWEB_INDEX_TIME_LIMIT},
    # Healing embeds missing entity vectors (a batch at most) and checks each scope's index.
    "retrieval.heal": {"soft_time_limit": MEMORYWEB_INDEX_SOFT_TIME_LIMIT, "time_limit": MEMORYWEB_INDEX_TIME_LIMIT},
}

# Language model and embeddings.
LLM_PROVIDER = env_choice("LLM_PROVIDER", "auto", {"auto", "ollama", "openai", "offline"})
OLLAMA_URL = env_str("OLLAMA_URL", "http://127.0.0.1:11434")
OLLAMA_MODEL = env_str("OLLAMA_MODEL", "llama3.1:8b")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_MODEL = env_str("OPENAI_MODEL", "gpt-4o-mini")
LLM_TIMEOUT = env_float("LLM_TIMEOUT", 60.0)
LLM_MAX_ATTEMPTS = env_int("LLM_MAX_ATTEMPTS", 3, minimum=1)
# Facts accepted from one extraction; the rest are dropped and counted (Episode.facts_dropped), so
# a runaway model reply cannot flood a scope.
MEMORYWEB_EXTRACT_MAX_FACTS = env_int("MEMORYWEB_EXTRACT_MAX_FACTS", 50, minimum=1)
EMBEDDER = env_choice("EMBEDDER", "local", {"local", "hash", "ollama", "openai"})
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL")  # empty: the embedder's default
# How the local model runs: "onnx" (onnxruntime on a graph exported once from the same weights into
# MEMORYWEB_HOME/models/: torch's vectors and name, less CPU per query and batch, no torch loaded at
# run time), "torch" (PyTorch) or "onnx-int8" (int8 weights: about twice as cheap again, different
# vectors keyed all-MiniLM-L6-v2-int8, so a switch needs `memoryweb reindex`). docs/ARCHITECTURE.md
# has the measured cost of each.
EMBEDDER_BACKEND = env_choice("EMBEDDER_BACKEND", "onnx", {"torch", "onnx", "onnx-int8"})
# Large batches of the local fp32 model (indexing: BF16_MIN_TEXTS texts or more) through a bfloat16
# TorchScript graph of it: "auto" where the CPU multiplies bfloat16 natively (AMX or AVX512-BF16;
# 0.36–0.41 of onnxruntime's fp32 time there, the same vectors to a cosine of 0.9999, so the same name),
# "true" or "false". Questions stay on EMBEDDER_BACKEND.
EMBEDDER_BF16 = env_choice("EMBEDDER_BF16", "auto", {"auto", "true", "false"})
# Threads one embedding batch runs on (onnxruntime's intra-op pool, or PyTorch's); 0: every core.
EMBEDDER_THREADS = env_int("EMBEDDER_THREADS", 0, minimum=0)
# `memoryweb reindex`: vectors embedded and committed per batch (an interrupted run keeps every
# batch it committed; the scope's indexing lock is taken per batch, so indexers go on between them).
MEMORYWEB_REINDEX_BATCH = env_int("MEMORYWEB_REINDEX_BATCH", 256, minimum=1)

# Retrieval (retrieval/): candidates per list = FRACTION of the scope's documents, clamped to
# MIN..MAX; reciprocal rank fusion constant; BM25 parameters; recency half-life and the
# importance above which nothing decays; HNSW search breadth.
RETRIEVAL_POOL_MIN = env_int("RETRIEVAL_POOL_MIN", 50, minimum=1)
RETRIEVAL_POOL_MAX = env_int("RETRIEVAL_POOL_MAX", 500, minimum=1)
RETRIEVAL_POOL_FRACTION = env_float("RETRIEVAL_POOL_FRACTION", 0.02)
# The longest nearest-neighbour list (retrieval/search/candidates.py): a graph search's cost grows with it (ef_search).
RETRIEVAL_VECTOR_POOL_MAX = env_int("RETRIEVAL_VECTOR_POOL_MAX", 200, minimum=1)
# The longest BM25 list of a large scope, where only its first ten are exact (retrieval/bm25_topk.py):
# each place past them costs a document visit and a row.
RETRIEVAL_BM25_POOL_MAX = env_int("RETRIEVAL_BM25_POOL_MAX", 200, minimum=1)
RETRIEVAL_RRF_K = env_float("RETRIEVAL_RRF_K", 10.0)
# How the candidate lists are fused: "rrf" (ranks, RETRIEVAL_RRF_K) or "zscore" (the lists' own
# scores standardised and summed); chosen by cross-validation on LOCOMO (retrieval/cv.py).
# A window's vector: "composed" from its turns' vectors (normalised mean: no model pass of its
# own, so a turn costs one), or "text", the window's own text embedded (a pass per window).
RETRIEVAL_WINDOW_VECTORS = env_choice("RETRIEVAL_WINDOW_VECTORS", "composed", {"composed", "text"})
RETRIEVAL_FUSION = env_choice("RETRIEVAL_FUSION", "rrf", {"rrf", "zscore"})
# A turn's (and a free-standing episode's) vector: made from what was "said" (no date label, no
# speaker's name; retrieval/documents.py: vector_text) or from its whole "document". And the
# question's vector: "unnamed" (the scope's speakers' names left out) or the question "asked".
# Both chosen by cross-validation on LOCOMO (retrieval/cv.py). A scope indexed under the other
# vector text keeps its vectors until reindexed (`memoryweb reindex`).
RETRIEVAL_TURN_VECTOR_TEXT = env_choice("RETRIEVAL_TURN_VECTOR_TEXT", "said", {"said", "document"})
# Two more variants measured by cross-validation (retrieval/search/question.py: dense_variant):
# "first-person" (the names as "I"/"my") and "content" (unnamed, without the question's words).
RETRIEVAL_DENSE_QUERY = env_choice("RETRIEVAL_DENSE_QUERY", "unnamed", {"unnamed", "asked", "first-person", "content"})
RETRIEVAL_BM25_K1 = env_float("RETRIEVAL_BM25_K1", 1.2)
RETRIEVAL_BM25_B = env_float("RETRIEVAL_BM25_B", 0.75)
RETRIEVAL_HALF_LIFE_DAYS = env_float("RETRIEVAL_HALF_LIFE_DAYS", 365.0)
RETRIEVAL_IMPORTANCE_FLOOR = env_float("RETRIEVAL_IMPORTANCE_FLOOR", 0.75)
RETRIEVAL_EF_SEARCH = env_int("RETRIEVAL_EF_SEARCH", 100, minimum=1)
# A scope with fewer vectors than this is searched exactly (retrieval/vector.py); 0: always HNSW.
RETRIEVAL_EXACT_BELOW = env_int("RETRIEVAL_EXACT_BELOW", 5000, minimum=0)
# A scope with at least this many vectors gets HNSW graphs of its own (memories/services/vectors.py); 0: never.
RETRIEVAL_SCOPE_GRAPH_AT = env_int("RETRIEVAL_SCOPE_GRAPH_AT", 50_000, minimum=0)
# maintenance_work_mem (MB) for building a scope's graph: about 2 KB per 384-dimension vector
# keeps the build in memory (a million vectors: 2,500); below that pgvector builds many times slower.
RETRIEVAL_GRAPH_BUILD_MB = env_int("RETRIEVAL_GRAPH_BUILD_MB", 1024, minimum=64)
# A scope's own graphs are built with these HNSW parameters (pgvector's m and ef_construction; with
# its defaults, 16 and 64, a 200-long list held 0.950-0.958 of the exact one at 100,000 turns, with
# ef_construction 128 0.967 for about a tenth more search time; m 24 0.975 for a third more and over
# twice the build: docs/ARCHITECTURE.md, "Recall against the exact pipeline"). Graphs built before keep theirs.
RETRIEVAL_GRAPH_M = env_int("RETRIEVAL_GRAPH_M", 16, minimum=2)
RETRIEVAL_GRAPH_EF_CONSTRUCTION = env_int("RETRIEVAL_GRAPH_EF_CONSTRUCTION", 128, minimum=4)
# Searched through graphs, a window list also takes the windows around this many of the nearest turns,
# scored exactly (retrieval/vector.py: windows_near_turns); 0: the window graphs' lists alone.
RETRIEVAL_WINDOWS_NEAR_TURNS = env_int("RETRIEVAL_WINDOWS_NEAR_TURNS", 30, minimum=0)
# A scope searched through graphs has its turn vectors held in memory by each process that recalls, up to
# this many MB in all, and its conversation lists (turns, ±1 and ±2 windows) computed exactly from them
# instead of by three graph searches (retrieval/matrix.py); 0: off. 100,000 turns of 384 dimensions: 154 MB.
RETRIEVAL_MATRIX_MB = env_int("RETRIEVAL_MATRIX_MB", 256, minimum=0)
# Decoded BM25 packs (retrieval/packs.py) a process keeps between questions, least recently used first out, at most
# this many MB (28 bytes a posting); 0: every question reads its packs' arrays from the database again.
RETRIEVAL_PACK_CACHE_MB = env_int("RETRIEVAL_PACK_CACHE_MB", 256, minimum=0)
# That matrix product through BLAS, on as many threads as it has cores, instead of numpy's loop on one core (the
# default: one core leaves the other to the database's BM25 at the same moment; docs/ARCHITECTURE.md, "One core for the
# product").
RETRIEVAL_MATRIX_BLAS = env_bool("RETRIEVAL_MATRIX_BLAS", False)
# BM25 scores of what the one speaker a question names said are multiplied by 1 + this.
RETRIEVAL_SPEAKER_BOOST = env_float("RETRIEVAL_SPEAKER_BOOST", 0.5)
# "Caroline's kids" names the speaker Caroline for the boost above (off: only the whole word does).
RETRIEVAL_POSSESSIVE_SPEAKER = env_bool("RETRIEVAL_POSSESSIVE_SPEAKER", False)
# One more candidate list per speaker the question names ("Caroline's", "Jon and Gina" too): the
# nearest of that speaker's own turns, in scopes small enough to search exactly
# (RETRIEVAL_EXACT_BELOW): for conjectures about them ("Would Caroline …?", "What might Jon …?"),
# questions asking for several things ("What books has Melanie read?", "How many times …":
# retrieval/search/question.py: asks_list) and questions naming two speakers or more
# ("conjectures+lists+pairs", the default: it held in the cross-validation, retrieval/cv.py and
# docs/ARCHITECTURE.md, "… a fourth round"); conjectures alone ("conjectures", the default before),
# with pairs or with lists only, every question naming one ("all"), or "off".
RETRIEVAL_SPEAKER_LISTS = env_choice("RETRIEVAL_SPEAKER_LISTS", "conjectures+lists+pairs",
                                     {"off", "conjectures", "conjectures+pairs", "conjectures+lists", "conjectures+lists+pairs", "all"})
# A question asking for several things (retrieval/search/question.py: asks_list) gets at most this
# many of its first k results from one session (0: off). Measured by cross-validation: off.
RETRIEVAL_LIST_SESSION_CAP = env_int("RETRIEVAL_LIST_SESSION_CAP", 0, minimum=0)
# Lexical feedback (RM3-style), evidence searches only: this many words of the first fusion's best
# turns (in two of its top five, by idf) added to the question's for one more BM25 list of turns,
# then fused again (0: off). Judged by cross-validation (retrieval/cv.py).
RETRIEVAL_LEXICAL_FEEDBACK = env_int("RETRIEVAL_LEXICAL_FEEDBACK", 0, minimum=0)
# An evidence search's first 30 turns put in a learned order (retrieval/rerank.py; weights in
# retrieval/rerank.json, fitted and measured leaving one LOCOMO conversation out by `memoryweb eval
# rerank`), in scopes searched exactly (RETRIEVAL_EXACT_BELOW). Off: the pipeline's order.
RETRIEVAL_RERANK = env_bool("RETRIEVAL_RERANK", True)
# A question's time words ("last year", "in May 2023") become a window (retrieval/temporal.py):
# "facts" (default) narrows the facts by when they held, not turns or episodes by when they were
# said; "all" narrows those too (before: it lost in every cross-validation fold on five LOCOMO
# conversations, a question's date being when a thing happened, a turn's when it was said);
# "off" reads no window. The since/until filters and "what changed in …" narrow everything.
RETRIEVAL_TIME_WINDOWS = env_choice("RETRIEVAL_TIME_WINDOWS", "facts", {"facts", "all", "off"})
# The widest window of neighbouring turns searched beside the turns: 2 (±1 and ±2), 1 (±1), 0 (none).
# Windows are indexed either way; this only picks the lists searched.
RETRIEVAL_WINDOW_RADIUS = env_int("RETRIEVAL_WINDOW_RADIUS", 2, minimum=0)
# After fusion, within the head that is scored on the lanes (retrieval/search/fusion.py): what was
# said in the period the question names (or within a week after it), when that period does not
# narrow turns (RETRIEVAL_TIME_WINDOWS), has its fused score multiplied by 1 + RETRIEVAL_TIME_PREFERENCE,
# and what the one speaker a question names said by 1 + RETRIEVAL_SPEAKER_PREFERENCE (off: it did not
# hold in the cross-validation); 0 switches either off. And a turn among the first
# RETRIEVAL_REPLY_FOLLOWS results that asks a question ("?") brings the next turn of its session,
# another speaker's reply, right after it (0: off; retrieval/search/hydration.py). Each judged by
# cross-validation on LOCOMO (retrieval/cv.py).
RETRIEVAL_SPEAKER_PREFERENCE = env_float("RETRIEVAL_SPEAKER_PREFERENCE", 0.0, minimum=0.0)
RETRIEVAL_TIME_PREFERENCE = env_float("RETRIEVAL_TIME_PREFERENCE", 0.5, minimum=0.0)
RETRIEVAL_REPLY_FOLLOWS = env_int("RETRIEVAL_REPLY_FOLLOWS", 3, minimum=0)
# A question asking when ("When did …", "How long ago …": retrieval/search/question.py: asks_when)
# has the head's lines that tell a time ("yesterday", "last week", a month: tells_time) multiplied
# by 1 + RETRIEVAL_WHEN_PREFERENCE (0: off). Judged by cross-validation (docs/ARCHITECTURE.md,
# "… a fifth round").
RETRIEVAL_WHEN_PREFERENCE = env_float("RETRIEVAL_WHEN_PREFERENCE", 0.0, minimum=0.0)
# Server processes load the embedder and dateparser in a background thread at start (memoryweb/warmup.py).
MEMORYWEB_WARM_UP = env_bool("MEMORYWEB_WARM_UP", True)
# Without a broker, a server process runs extraction and indexing on two background threads of its
# own (retrieval/background.py, started by asgi.py's lifespan and by wsgi.py), so a write is answered
# once its raw rows are committed; false: they run inside the request, as in the CLI.
MEMORYWEB_BACKGROUND = env_bool("MEMORYWEB_BACKGROUND", True)
# How often those threads also look for work nobody announced to them: episodes pending in the
# database (another process's, a dead runner's claims) and scopes whose index is behind.
MEMORYWEB_BACKGROUND_SWEEP_SECONDS = env_float("MEMORYWEB_BACKGROUND_SWEEP_SECONDS", 10.0, minimum=0.1)
# The vector search runs beside BM25 on a second connection (outside transactions); see retrieval/concurrent.py.
RETRIEVAL_CONCURRENT = env_bool("RETRIEVAL_CONCURRENT", True)
RETRIEVAL_CONCURRENT_THREADS = env_int("RETRIEVAL_CONCURRENT_THREADS", 6, minimum=1)

# The cache: Redis when REDIS_URL is set (shared by every process: the API's rate limit counts
# there), else this process's memory.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    if REDIS_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "memoryweb"}
}

# The API (memoryweb/api.py): requests per token (or browser user) as N/s, N/m, N/h or N/d; the
# largest request body in bytes (a larger one is answered 413).
MEMORYWEB_API_RATE = env_rate("MEMORYWEB_API_RATE", "600/m")
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MEMORYWEB_MAX_REQUEST_BYTES", 2 * 1024 * 1024, minimum=1024)
# Idempotency keys of writes (accounts/idempotency.py) are honoured this many hours; the caller
# log (accounts/calllog.py) keeps this many days. Both are pruned by `accounts.prune_call_log`.
MEMORYWEB_IDEMPOTENCY_KEY_HOURS = env_int("MEMORYWEB_IDEMPOTENCY_KEY_HOURS", 24, minimum=1)
MEMORYWEB_CALL_LOG_DAYS = env_int("MEMORYWEB_CALL_LOG_DAYS", 30, minimum=1)
# The most seconds a call's log row waits in its process to be written with the others recorded
# meanwhile, in one statement (accounts/calllog.py); 0 writes each row as its call ends.
MEMORYWEB_CALL_LOG_DELAY = env_float("MEMORYWEB_CALL_LOG_DELAY", 0.2, minimum=0.0)

# Limits.
MEMORYWEB_MAX_TEXT_BYTES = env_int("MEMORYWEB_MAX_TEXT_BYTES", 32 * 1024, minimum=1)
# The local CLI acts as this user (default: the first admin) and is audited as such.
MEMORYWEB_CLI_USER = env_str("MEMORYWEB_CLI_USER")
# Where the first run writes the generated admin password (default: MEMORYWEB_HOME/admin-password).
MEMORYWEB_ADMIN_PASSWORD_FILE = env_str("MEMORYWEB_ADMIN_PASSWORD_FILE")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING").upper()},
    "loggers": {"memoryweb": {"level": env_str("LOG_LEVEL", "INFO").upper(), "propagate": True}},
}

# Content-Security-Policy (django-csp) on every response, pages, admin and API alike. Scripts and
# styles come from our own static files only: no inline <script>, no event-handler attribute, no
# style attribute in any template, and htmx is told not to eval or insert its indicator <style>
# (templates/pages/base.html). The browser tests fail on any violation (tests/e2e/conftest.py).
# One block, kept last, so that other settings merge beside it (docs/ARCHITECTURE.md, "Pages").
# "ninja" too: with it installed, the API's docs page (/api/v1/docs) serves Swagger UI from our
# static files instead of a CDN, which script-src 'self' would refuse.
INSTALLED_APPS += ["csp", "ninja"]
MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1, "csp.middleware.CSPMiddleware")
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", "'report-sample'"],
        "style-src": ["'self'", "'report-sample'"],
        "img-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
