"""Settings from the environment, `memoryweb config` and /healthz."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memoryweb.checks import check_broker

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args, env=None, timeout=120):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "memoryweb.cli", *args], capture_output=True, text=True, env=full_env, timeout=timeout)


def test_a_malformed_database_url_is_one_sentence_not_a_traceback():
    result = run_cli("config", env={"DATABASE_URL": "not a url"})
    assert result.returncode == 2
    assert "DATABASE_URL is malformed" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_non_postgres_database_url_is_refused():
    result = run_cli("config", env={"DATABASE_URL": "mysql://u:p@localhost/db"})
    assert result.returncode == 2 and "PostgreSQL" in result.stderr


def test_a_bad_boolean_is_named():
    result = run_cli("check", env={"DEBUG": "maybe"})
    assert result.returncode == 2 and "DEBUG must be true or false" in result.stderr


def test_a_connection_pool_and_kept_connections_exclude_each_other():
    result = run_cli("check", env={"DB_POOL_SIZE": "4", "DB_CONN_MAX_AGE": "60"})
    assert result.returncode == 2 and "DB_POOL_SIZE and DB_CONN_MAX_AGE exclude each other" in result.stderr
    assert "Traceback" not in result.stderr


def test_with_a_pool_size_the_database_borrows_from_a_psycopg_pool():
    code = (
        "import django; django.setup()\n"
        "from django.db import connection\n"
        "connection.ensure_connection()\n"
        "print(connection.settings_dict['OPTIONS']['pool']['max_size'], type(connection.pool).__name__, connection.pool.max_size)"
    )
    env = {**os.environ, "DB_POOL_SIZE": "3", "DJANGO_SETTINGS_MODULE": "memoryweb.settings"}
    env.pop("DB_CONN_MAX_AGE", None)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["3", "ConnectionPool", "3"]


def test_config_names_the_broken_piece_when_redis_is_unreachable():
    result = run_cli("config", "--quick", env={"REDIS_URL": "redis://127.0.0.1:1/0"})
    assert result.returncode == 1
    assert "broker" in result.stderr and "unreachable" in result.stdout
    assert "Traceback" not in result.stderr


def test_config_reports_the_embedded_database_and_pgvector():
    result = run_cli("config", "--quick", "--json")
    assert result.returncode == 0, result.stderr
    assert "pgvector 0.8" in result.stdout and "PostgreSQL 18" in result.stdout


def test_serve_refuses_an_unreachable_redis_with_one_sentence():
    result = run_cli("serve", "--port", "0", env={"REDIS_URL": "redis://127.0.0.1:1/0"})
    assert result.returncode == 1
    assert "Redis at redis://127.0.0.1:1/0 is unreachable" in result.stderr
    assert "Traceback" not in result.stderr


def _workers_setting(**env) -> int:
    code = "import django; django.setup(); from django.conf import settings; print(settings.MEMORYWEB_WORKERS)"
    clean = {k: v for k, v in os.environ.items() if k != "MEMORYWEB_WORKERS"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**clean, "DJANGO_SETTINGS_MODULE": "memoryweb.settings", **env})
    assert result.returncode == 0, result.stderr[-2000:]
    return int(result.stdout.strip())


def test_serve_runs_one_worker_per_core_at_most_four_unless_told():
    assert _workers_setting() == min(len(os.sched_getaffinity(0)), 4)
    assert _workers_setting(MEMORYWEB_WORKERS="3") == 3


def test_serve_refuses_no_workers_with_one_sentence():
    result = run_cli("serve", "--port", "0", "--workers", "0")
    assert result.returncode == 1
    assert "--workers must be at least 1." in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.django_db
def test_healthz_answers_200_when_all_is_well(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "failing": []}


@pytest.mark.django_db
def test_healthz_answers_503_naming_the_broken_piece(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"ok": False, "failing": ["broker"]}


def _revealing_values(settings) -> list[str]:
    """What an attacker would like to read in a health answer, taken from the running system."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0]
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        pgvector = cursor.fetchone()[0]
    db = connection.settings_dict
    return [db["NAME"], db["HOST"], str(settings.MEMORYWEB_HOME), settings.REDIS_URL, "127.0.0.1:1", server, pgvector]


@pytest.mark.django_db
def test_an_anonymous_healthz_reveals_no_host_database_url_or_version(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # failing, so its URL would be in the detail
    secrets = _revealing_values(settings)
    body = client.get("/healthz").content.decode()
    assert [value for value in secrets if value in body] == []
    assert set(client.get("/healthz").json()) == {"ok", "failing"}


@pytest.mark.django_db
def test_a_signed_in_staff_user_gets_the_detail_and_others_do_not(client, settings, cast):
    from accounts.services import user_create

    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    secrets = _revealing_values(settings)
    client.force_login(cast.owner)  # signed in, not staff
    assert "checks" not in client.get("/healthz").json()
    client.force_login(user_create(username="ops", password="pw-ops-12345", is_admin=True))
    body = client.get("/healthz")
    assert {c["name"] for c in body.json()["checks"]} == {"database", "broker", "llm"}
    assert [value for value in secrets[2:] if value not in body.content.decode()] == []  # home, Redis URL, versions


def _dockerfile_env() -> dict[str, str]:
    env = {}
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("ENV "):
            env.update(item.split("=", 1) for item in shlex.split(line[4:]))
    return env


def test_no_deployment_path_runs_with_debug_on():
    assert _dockerfile_env()["DEBUG"] == "false"
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        if "build" in service:
            assert service["environment"]["DEBUG"] == "false", name


def test_check_deploy_passes_in_the_dockerfiles_environment():
    env = {**_dockerfile_env(), "SECRET_KEY": "x7!Kq2#pL9@vR4$mZ8^bN1&cW6*tY3(hJ5)fG0-dS-long-enough-key"}
    result = run_cli("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout and "WARNING" not in result.stderr


@pytest.mark.parametrize("behind_proxy, header", [
    ("true", "('HTTP_X_FORWARDED_PROTO', 'https')"),
    ("false", "None"),
    (None, "None"),
])
def test_the_forwarded_proto_header_is_trusted_only_behind_a_proxy(behind_proxy, header):
    env = {**os.environ, "DEBUG": "false", "SECRET_KEY": "k" * 60}
    env.pop("MEMORYWEB_BEHIND_PROXY", None)
    if behind_proxy is not None:
        env["MEMORYWEB_BEHIND_PROXY"] = behind_proxy
    code = "from django.conf import settings; print(settings.SECURE_PROXY_SSL_HEADER)"
    result = run_cli("shell", "--no-imports", "-c", code, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == header


def test_the_broker_check_passes_in_eager_mode(settings):
    settings.REDIS_URL = ""
    assert check_broker().ok
