"""Production-safe defaults (issue 22): DEBUG off unless asked for, a secret key generated once,
`serve` on loopback only with DEBUG on, error pages and API errors that reveal nothing, cookies
and SecurityMiddleware's headers, and `check --deploy` clean on the documented production settings."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from accounts.tokens import token_issue
from memoryweb.management.commands.serve import is_loopback

ROOT = Path(__file__).resolve().parents[2]
# The documented production settings (README "Running in production"; .env.example).
PRODUCTION = {
    "SECRET_KEY": "x7!Kq2#pL9@vR4$mZ8^bN1&cW6*tY3(hJ5)fG0-dS-long-enough-key",
    "ALLOWED_HOSTS": "memory.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://memory.example.com",
    "MEMORYWEB_BEHIND_PROXY": "true",
}
# Settings read in a fresh process that never reaches a database (nothing listens on port 1).
NO_DATABASE = {"DATABASE_URL": "postgres://u:p@127.0.0.1:1/x", "DJANGO_SETTINGS_MODULE": "memoryweb.settings"}
PRINT_SETTINGS = (
    "import django; django.setup(); from django.conf import settings as s; "
    "print(s.DEBUG, s.SECRET_KEY, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, getattr(s, 'SECURE_SSL_REDIRECT', False))"
)


def fresh_env(tmp_path: Path, **extra) -> dict[str, str]:
    """The environment of a fresh machine: none of the settings an operator would set."""
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "MEMORYWEB_HTTPS", "MEMORYWEB_BEHIND_PROXY"}}
    return {**env, **NO_DATABASE, "MEMORYWEB_HOME": str(tmp_path), **extra}


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_a_fresh_machine_runs_with_debug_off_and_one_generated_secret_key(tmp_path):
    first = run([sys.executable, "-c", PRINT_SETTINGS], fresh_env(tmp_path))
    assert first.returncode == 0, first.stderr
    debug, key, session_secure, csrf_secure, redirect = first.stdout.split()
    assert debug == "False" and len(key) >= 50
    # Plain HTTP on 127.0.0.1 keeps working: no redirect to HTTPS, cookies not TLS-only.
    assert (session_secure, csrf_secure, redirect) == ("False", "False", "False")
    path = tmp_path / "secret_key"
    assert path.read_text().strip() == key and stat.S_IMODE(path.stat().st_mode) == 0o600
    again = run([sys.executable, "-c", PRINT_SETTINGS], fresh_env(tmp_path))
    assert again.stdout.split()[1] == key  # kept: sessions survive a restart


def test_debug_is_on_only_when_asked_for(tmp_path):
    assert run([sys.executable, "-c", PRINT_SETTINGS], fresh_env(tmp_path, DEBUG="true")).stdout.split()[0] == "True"
    assert run([sys.executable, "-c", PRINT_SETTINGS], fresh_env(tmp_path, DEBUG="false")).stdout.split()[0] == "False"


def test_a_given_secret_key_is_used_and_nothing_is_written(tmp_path):
    result = run([sys.executable, "-c", PRINT_SETTINGS], fresh_env(tmp_path, SECRET_KEY="k" * 60))
    assert result.stdout.split()[1] == "k" * 60 and not (tmp_path / "secret_key").exists()


@pytest.mark.parametrize("https", ["MEMORYWEB_HTTPS", "MEMORYWEB_BEHIND_PROXY"])
def test_with_tls_the_cookies_are_secure_and_plain_http_is_redirected(tmp_path, https):
    result = run([sys.executable, "-c", PRINT_SETTINGS], fresh_env(tmp_path, **{https: "true"}))
    assert result.stdout.split()[2:] == ["True", "True", "True"], result.stderr


def test_serve_with_debug_on_refuses_any_host_but_loopback_in_one_sentence(tmp_path):
    result = run([sys.executable, "-m", "memoryweb.cli", "serve", "--host", "0.0.0.0"], fresh_env(tmp_path, DEBUG="true"))
    assert result.returncode != 0
    assert "DEBUG is on" in result.stderr and "'0.0.0.0'" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_loopback_hosts():
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "::", "", "192.168.1.5", "memory.example.com"))


def test_check_deploy_reports_nothing_on_the_documented_production_settings(tmp_path):
    result = run([sys.executable, "-m", "memoryweb.cli", "check", "--deploy", "--fail-level", "WARNING"], fresh_env(tmp_path, **PRODUCTION))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout and "WARNING" not in result.stderr


def test_check_deploy_warns_when_debug_is_on(tmp_path):
    """The check can fail: DEBUG on is reported (security.W018)."""
    result = run([sys.executable, "-m", "memoryweb.cli", "check", "--deploy", "--fail-level", "WARNING"],
                 fresh_env(tmp_path, **PRODUCTION, DEBUG="true"))
    assert result.returncode != 0 and "W018" in result.stdout + result.stderr


# What an error page or an API error must never show.
def leaks(body: str) -> list[str]:
    import django
    import psycopg

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg_version = cursor.fetchone()[0].split()[0]
    found = [
        word for word in (str(ROOT), sys.version.split()[0], pg_version, "Traceback", "SELECT", "PostgreSQL", "Python",
                          django.get_version(), psycopg.__version__, "SECRET_KEY", "settings")
        if word in body
    ]
    return found


class Boom(Exception):
    pass


def boom(*args, **kwargs):
    raise Boom(f"SELECT secret FROM memories_scope -- in {ROOT}/memories/scopes.py")


@pytest.mark.django_db
def test_a_missing_page_reveals_nothing(client, cast):
    client.force_login(cast.owner)
    response = client.get("/no/such/page/")
    assert response.status_code == 404 and "Not found" in response.content.decode()
    assert leaks(response.content.decode()) == []
    page = client.get("/scopes/no-such-scope/")
    assert page.status_code == 404 and leaks(page.content.decode()) == []


@pytest.mark.django_db
def test_a_forbidden_page_reveals_nothing(client, cast):
    client.force_login(cast.editor)  # a member of team-a, not its admin: its tokens are not theirs to see
    response = client.get(f"/teams/{cast.team_a.slug}/", headers={"HX-Request": "true", "HX-Target": "tokens"})
    assert response.status_code == 403 and leaks(response.content.decode()) == []
    forged = type(client)(enforce_csrf_checks=True)  # a post from elsewhere: Django's CSRF refusal
    forged.force_login(cast.owner)
    refused = forged.post(f"/teams/{cast.team_a.slug}/members/add", {"username": "viewer"})
    assert refused.status_code == 403 and "reload the page" in refused.content.decode()
    assert leaks(refused.content.decode()) == []


@pytest.mark.django_db
def test_a_server_error_on_a_page_reveals_nothing(client, cast, monkeypatch):
    monkeypatch.setattr("memories.views.scope_list", boom)
    client.raise_request_exception = False
    client.force_login(cast.owner)
    response = client.get("/")
    body = response.content.decode()
    assert response.status_code == 500 and "Something went wrong" in body
    assert leaks(body) == []


@pytest.mark.django_db
def test_a_server_error_in_the_api_is_json_that_reveals_nothing(client, cast, monkeypatch):
    monkeypatch.setattr("memories.api.scope_list", boom)
    client.raise_request_exception = False
    secret = token_issue(actor=cast.p_owner, user=cast.owner, name="t", scopes=[cast.scope_a], can_write=False).secret
    response = client.get("/api/v1/scopes", headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code == 500
    assert response.json() == {"status": 500, "code": "server_error", "message": "Something went wrong on our side; it has been logged."}
    assert leaks(response.content.decode()) == []
    missing = client.get("/api/v1/no-such-thing", headers={"Authorization": f"Bearer {secret}"})
    assert missing.status_code == 404 and leaks(missing.content.decode()) == []


@pytest.mark.django_db
def test_the_leak_check_can_fail():
    assert leaks(f"Traceback (most recent call last): {ROOT}/x.py SELECT 1") == [str(ROOT), "Traceback", "SELECT"]


@pytest.mark.django_db
def test_cookies_are_httponly_and_samesite_lax_and_the_headers_are_sent(client, cast):
    page = client.get("/login/")
    csrf = page.cookies["csrftoken"]
    assert csrf["httponly"] and csrf["samesite"] == "Lax" and not csrf["secure"]
    assert page["X-Content-Type-Options"] == "nosniff" and page["Referrer-Policy"] == "same-origin"
    assert page["X-Frame-Options"] == "DENY"
    # The pages' forms carry the token in the page itself, never read from the cookie.
    token = page.context["csrf_token"]
    strict = type(client)(enforce_csrf_checks=True)
    strict.cookies = client.cookies
    signed_in = strict.post("/login/", {"username": "owner", "password": "pw-owner-123", "csrfmiddlewaretoken": str(token)})
    assert signed_in.status_code == 302
    session = signed_in.cookies["sessionid"]
    assert session["httponly"] and session["samesite"] == "Lax"
