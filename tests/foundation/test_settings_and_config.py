"""Settings from the environment, `memoryweb config` and /healthz."""

import os
import subprocess
import sys

import pytest

from memoryweb.checks import check_broker


def run_cli(*args, env=None, timeout=120):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "memoryweb.cli", *args], capture_output=True, text=True, env=full_env, timeout=timeout)


def test_debug_off_without_secret_key_refuses_to_start_with_a_clear_message():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env["DEBUG"] = "false"
    result = subprocess.run([sys.executable, "-m", "memoryweb.cli", "check"], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2
    assert "SECRET_KEY is not set" in result.stderr
    assert "Traceback" not in result.stderr


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


def test_production_settings_pass_check_deploy():
    env = {"DEBUG": "false", "SECRET_KEY": "x7!Kq2#pL9@vR4$mZ8^bN1&cW6*tY3(hJ5)fG0-dS-long-enough-key", "ALLOWED_HOSTS": "memory.example.com"}
    result = run_cli("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr


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


@pytest.mark.django_db
def test_healthz_answers_200_when_all_is_well(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert {c["name"] for c in body["checks"]} == {"database", "broker", "llm"}


@pytest.mark.django_db
def test_healthz_answers_503_naming_the_broken_piece(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    broken = [c["name"] for c in response.json()["checks"] if not c["ok"]]
    assert broken == ["broker"]


def test_the_broker_check_passes_in_eager_mode(settings):
    settings.REDIS_URL = ""
    assert check_broker().ok
