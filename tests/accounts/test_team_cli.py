"""`memoryweb team`: the door over the membership services."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import Role
from accounts.permissions import team_role
from accounts.models import AuditEvent

pytestmark = pytest.mark.django_db


def call(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_team_create_then_list_shows_the_team_with_the_role(cast, capsys):
    assert call("team", "create", "research", "--name", "Research", "--as", "editor") == (
        "Created team research; editor is its admin.\n"
    )
    call("team", "list", "--json", "--as", "editor")
    listed = json.loads(capsys.readouterr().out)
    assert listed["user"] == "editor"
    assert [(t["slug"], t["role"], t["personal"]) for t in listed["teams"]] == [
        ("editor", "admin", True), ("research", "admin", False), ("team-a", "editor", False),
    ]
    text = call("team", "list", "--as", "viewer")
    assert text.splitlines()[0] == "Teams of viewer:" and "team-a" in text and "research" not in text


def test_an_admin_adds_re_roles_and_removes_members(cast):
    assert call("team", "add", "outsider", "--team", "team-a", "--role", "viewer", "--as", "owner") == (
        "Added outsider to team team-a as viewer.\n"
    )
    call("team", "role", "outsider", "--team", "team-a", "--role", "admin", "--as", "owner")
    assert team_role(cast.outsider, cast.team_a) == Role.ADMIN
    call("team", "remove", "outsider", "--team", "team-a", "--as", "owner")
    assert team_role(cast.outsider, cast.team_a) is None
    assert AuditEvent.objects.filter(actor_user=cast.owner, action__startswith="team.member_").count() == 3


def test_a_non_admin_is_refused_in_one_line(cast):
    with pytest.raises(CommandError) as refused:
        call("team", "add", "outsider", "--team", "team-a", "--role", "admin", "--as", "editor")
    assert str(refused.value) == "Only admins of team 'team-a' can manage its members."
    assert team_role(cast.outsider, cast.team_a) is None


def test_an_outsider_sees_no_team(cast):
    with pytest.raises(CommandError, match="^No team named 'team-a'.$"):
        call("team", "remove", "owner", "--team", "team-a", "--as", "outsider")
    with pytest.raises(CommandError, match="^No team named 'nowhere'.$"):
        call("team", "add", "viewer", "--team", "nowhere", "--role", "viewer", "--as", "owner")


def test_the_last_admin_is_neither_removed_nor_demoted(cast):
    with pytest.raises(CommandError, match="Cannot remove owner: they are the last admin of team 'team-a'"):
        call("team", "remove", "owner", "--team", "team-a", "--as", "owner")
    with pytest.raises(CommandError, match="Cannot demote owner"):
        call("team", "role", "owner", "--team", "team-a", "--role", "viewer", "--as", "owner")
    assert team_role(cast.owner, cast.team_a) == Role.ADMIN


def test_an_unknown_user_is_named(cast):
    with pytest.raises(CommandError, match="No active user named 'nobody'"):
        call("team", "add", "nobody", "--team", "team-a", "--role", "viewer", "--as", "owner")
