"""`memoryweb token create`: lifetimes, tokens for a team's members, and its --json."""

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from accounts.tokens import token_authenticate

pytestmark = pytest.mark.django_db


def create(capsys, *args) -> dict:
    capsys.readouterr()
    call_command("token", "create", *args, "--json")
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("lifetime, expected", [("30d", timedelta(days=30)), ("12h", timedelta(hours=12)), ("2w", timedelta(weeks=2))])
def test_expires_takes_a_lifetime(cast, capsys, lifetime, expected):
    out = create(capsys, "agent", "--scope", "alpha", "--expires", lifetime, "--as", "owner")
    token = token_authenticate(out["token"])
    assert abs(token.expires_at - (timezone.now() + expected)) < timedelta(minutes=1)
    assert out["expires_at"] == token.expires_at.isoformat()


def test_expires_takes_a_date_and_refuses_nonsense(cast, capsys):
    out = create(capsys, "agent", "--scope", "alpha", "--expires", "2099-01-01", "--as", "owner")
    assert token_authenticate(out["token"]).expires_at.year == 2099
    with pytest.raises(CommandError, match="lifetime like 30d"):
        call_command("token", "create", "agent", "--scope", "alpha", "--expires", "30x", "--as", "owner")
    with pytest.raises(CommandError, match="must lie in the future"):
        call_command("token", "create", "agent", "--scope", "alpha", "--expires", "2001-01-01", "--as", "owner")


def test_a_team_admin_issues_a_token_for_a_member(cast, capsys):
    out = create(capsys, "their-agent", "--scope", "alpha", "--scope", "alpha-two", "--write", "--user", "editor", "--as", "owner")
    token = token_authenticate(out["token"])
    assert token.user == cast.editor and token.can_write
    assert {s.slug for s in token.scopes.all()} == {"alpha", "alpha-two"}
    assert (out["user"], out["name"], out["scopes"], out["can_write"]) == ("editor", "their-agent", ["alpha", "alpha-two"], True)
    assert out["prefix"] == token.prefix and out["expires_at"] is None


def test_only_a_team_admin_issues_for_others_and_never_beyond_their_rights(cast):
    with pytest.raises(CommandError, match="Only admins of team 'team-a'"):
        call_command("token", "create", "t", "--scope", "alpha", "--user", "viewer", "--as", "editor")
    with pytest.raises(CommandError, match="viewer may not write scope 'alpha'"):
        call_command("token", "create", "t", "--scope", "alpha", "--write", "--user", "viewer", "--as", "owner")
    with pytest.raises(CommandError, match="No active user named 'nobody'"):
        call_command("token", "create", "t", "--scope", "alpha", "--user", "nobody", "--as", "owner")
