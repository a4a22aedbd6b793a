import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import ApiToken, User
from accounts.tokens import token_authenticate
from accounts.models import AuditEvent
from memories.models import Scope


def call(*args, stdin: str | None = None, monkeypatch=None) -> str:
    out = io.StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_user_create_reads_the_password_from_stdin_and_makes_a_personal_team(monkeypatch, capsys):
    call("user", "create", "ada", "--admin", "--password-stdin", stdin="correct horse battery\n", monkeypatch=monkeypatch)
    user = User.objects.get(username="ada")
    assert user.is_superuser and user.check_password("correct horse battery")
    assert user.personal_team.memberships.get(user=user).role == "admin"


@pytest.mark.django_db
def test_user_create_refuses_a_duplicate_and_a_weak_password(monkeypatch):
    call("user", "create", "ada", "--password-stdin", stdin="correct horse battery\n", monkeypatch=monkeypatch)
    with pytest.raises(CommandError, match="exists already"):
        call("user", "create", "ada", "--password-stdin", stdin="correct horse battery\n", monkeypatch=monkeypatch)
    with pytest.raises(CommandError, match="too short|too common"):
        call("user", "create", "bob", "--password-stdin", stdin="abc\n", monkeypatch=monkeypatch)


@pytest.mark.django_db
def test_the_cli_acts_as_the_first_admin_created_on_a_fresh_install(settings, tmp_path, capsys):
    settings.MEMORYWEB_HOME = tmp_path
    call("scope", "create", "notes", "--name", "Notes")
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and (tmp_path / "admin-password").exists()
    scope = Scope.objects.get(slug="notes")
    assert scope.team == admin.personal_team and scope.name == "Notes"
    call("scope", "list", "--json")
    listed = json.loads(capsys.readouterr().out)
    assert [s["slug"] for s in listed["scopes"]] == ["notes"]


@pytest.mark.django_db
def test_scope_create_rejects_bad_slugs_duplicates_and_foreign_teams(cast):
    with pytest.raises(CommandError, match="Invalid scope slug"):
        call("scope", "create", "Bad Slug!", "--as", "owner")
    with pytest.raises(CommandError, match="exists already"):
        call("scope", "create", "alpha", "--as", "owner")
    with pytest.raises(CommandError, match="No team named 'team-b'"):
        call("scope", "create", "x", "--team", "team-b", "--as", "owner")
    with pytest.raises(CommandError, match="Only admins"):
        call("scope", "create", "x", "--team", "team-a", "--as", "editor")
    call("scope", "create", "x", "--team", "team-a", "--as", "owner")
    assert Scope.objects.get(slug="x").team == cast.team_a


@pytest.mark.django_db
def test_scope_list_shows_only_what_the_user_may_read(cast, capsys):
    call("scope", "list", "--json", "--as", "viewer")
    assert {s["slug"] for s in json.loads(capsys.readouterr().out)["scopes"]} == {"alpha", "alpha-two"}


@pytest.mark.django_db
def test_scope_list_says_whose_scopes_and_how_to_see_others(cast, settings, tmp_path):
    settings.MEMORYWEB_HOME = tmp_path
    lines = call("scope", "list").splitlines()  # the first admin, created now, is in none of the cast's teams
    assert lines == [
        "Scopes visible to admin: none.",
        "3 scopes exist in teams admin is not in; act as another user with --as USER.",
    ]
    lines = call("scope", "list", "--as", "outsider").splitlines()
    assert lines[0] == "Scopes visible to outsider:" and lines[1].split()[:2] == ["bravo", "team-b"]
    assert lines[2] == "2 more scopes exist in teams outsider is not in; act as another user with --as USER."


@pytest.mark.django_db
def test_scope_list_on_an_empty_install_says_how_to_make_one(settings, tmp_path):
    settings.MEMORYWEB_HOME = tmp_path
    assert call("scope", "list").splitlines() == ["Scopes visible to admin: none.", "Create one with: memoryweb scope create SLUG"]


@pytest.mark.django_db
def test_token_create_shows_the_secret_once_and_audits(cast, capsys):
    call("token", "create", "agent", "--scope", "alpha", "--write", "--json", "--as", "owner")
    secret = json.loads(capsys.readouterr().out)["token"]
    assert token_authenticate(secret).name == "agent"
    assert AuditEvent.objects.filter(action="token.create", actor_user=cast.owner).exists()
    call("token", "list", "--as", "owner")
    assert secret not in capsys.readouterr().out
    prefix = ApiToken.objects.get(name="agent").prefix
    call("token", "revoke", prefix, "--as", "owner")
    assert token_authenticate(secret) is None
    assert AuditEvent.objects.filter(action="token.revoke").count() == 1


@pytest.mark.django_db
def test_a_viewer_cannot_issue_a_write_token_nor_name_a_foreign_scope(cast):
    with pytest.raises(CommandError, match="may not write"):
        call("token", "create", "t", "--scope", "alpha", "--write", "--as", "viewer")
    with pytest.raises(CommandError, match="No scope named 'bravo'"):
        call("token", "create", "t", "--scope", "bravo", "--as", "owner")


def test_a_database_without_tables_asks_for_migrate_instead_of_a_traceback():
    import os
    import subprocess
    import sys
    import uuid

    import psycopg
    from django.db import connection

    params = connection.settings_dict
    name = f"mw_empty_{uuid.uuid4().hex[:8]}"
    admin = dict(host=params["HOST"], port=params["PORT"], user=params["USER"], password=params["PASSWORD"] or None, dbname="postgres")
    with psycopg.connect(**admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        env = {**os.environ, "MEMORYWEB_DATABASE_NAME": name}
        result = subprocess.run(
            [sys.executable, "-m", "memoryweb.cli", "scope", "list"], capture_output=True, text=True, env=env, timeout=120
        )
    finally:
        with psycopg.connect(**admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert result.returncode == 1
    assert "run `memoryweb migrate` first" in result.stderr and "Traceback" not in result.stderr


def run_cli(*args, env=None):
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "memoryweb.cli", *args], capture_output=True, text=True, env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.mark.parametrize("command", [["store", "hello", "--scope", "notes"], ["migrate"]])  # ours, and Django's own
def test_a_command_against_a_stopped_database_prints_one_sentence(command):
    result = run_cli(*command, env={"DATABASE_URL": "postgres://x:y@127.0.0.1:1/db"})
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "PostgreSQL at postgresql://127.0.0.1:1/db is unreachable" in result.stderr
    assert "y@" not in result.stderr  # no password


def test_help_lists_our_commands_grouped_and_keeps_djangos_reachable():
    result = run_cli("--help")
    assert result.returncode == 0
    text = result.stdout
    groups = [line for line in text.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert groups[:3] == ["memory:", "admin:", "operations:"]
    assert "  store        Store one memory in a scope\n" in text and "  team " in text
    assert "flush" not in text and "startproject" not in text
    assert "memoryweb help --django" in text
    django = run_cli("help", "--django").stdout
    assert "flush" in django and "startproject" in django
    assert "--scope" in run_cli("help", "store").stdout


@pytest.mark.django_db
def test_a_database_behind_the_code_is_one_sentence_saying_to_migrate(cast):
    from django.db import connection

    with connection.cursor() as cursor:  # a column a newer migration added, as if that migration had not run
        cursor.execute("ALTER TABLE memories_fact DROP COLUMN review")
    with pytest.raises(CommandError) as refused:
        call_command("facts", "--scope", "alpha", "--as", "owner")
    assert str(refused.value) == "The database is older than this memoryweb: run `memoryweb migrate` first."
