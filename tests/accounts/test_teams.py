"""Teams and memberships: only a team's admins change them, never leaving it without an admin,
each change audited; creating users, teams and the first admin is all-or-nothing, also when two
processes do it at once."""

import stat
import threading
import time

import pytest
from django.db import connection

from accounts import services
from accounts.models import Membership, Role, Team, User
from accounts.permissions import Principal, is_team_admin, team_get, team_role
from accounts.services import (
    local_admin_ensure, membership_add, membership_remove, membership_set_role, team_create, user_create,
)
from accounts.tokens import token_issue
from memoryweb.errors import Conflict, Forbidden, InvalidInput, NotFound
from accounts.models import AuditEvent


def test_is_team_admin_answers_from_the_membership(cast):
    assert is_team_admin(cast.owner, cast.team_a)
    assert not is_team_admin(cast.editor, cast.team_a)
    assert not is_team_admin(cast.outsider, cast.team_a)
    assert team_role(cast.viewer, cast.team_a) == Role.VIEWER and team_role(cast.outsider, cast.team_a) is None
    cast.owner.is_active = False
    assert not is_team_admin(cast.owner, cast.team_a)


def test_team_create_makes_the_actor_its_admin_and_is_audited(cast):
    team = team_create(actor=cast.p_editor, slug="research", name="Research")
    assert team.name == "Research" and is_team_admin(cast.editor, team)
    event = AuditEvent.objects.get(action="team.create")
    assert event.actor_user == cast.editor and event.target_id == str(team.public_id)
    assert event.after == {"slug": "research", "name": "Research", "admin": "editor"}


def test_team_create_refuses_a_token_a_bad_slug_and_a_taken_one(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="t", scopes=[cast.scope_a], can_write=True)
    with pytest.raises(Forbidden, match="API tokens cannot create teams"):
        team_create(actor=Principal.for_token(issued.token), slug="x")
    with pytest.raises(InvalidInput, match="like 'team-x'"):
        team_create(actor=cast.p_owner, slug="Team X")
    with pytest.raises(Conflict, match="exists already"):
        team_create(actor=cast.p_owner, slug="team-b")
    assert not Team.objects.filter(slug__in=["x", "team-x"]).exists()


def test_an_admin_adds_re_roles_and_removes_a_member_each_audited(cast):
    newcomer = user_create(username="newcomer", password=None)
    membership_add(actor=cast.p_owner, team=cast.team_a, user=newcomer, role=Role.VIEWER)
    membership_set_role(actor=cast.p_owner, team=cast.team_a, user=newcomer, role=Role.EDITOR)
    assert team_role(newcomer, cast.team_a) == Role.EDITOR
    membership_remove(actor=cast.p_owner, team=cast.team_a, user=newcomer)
    assert team_role(newcomer, cast.team_a) is None
    events = list(AuditEvent.objects.filter(target_type="team", target_id=str(cast.team_a.public_id)).order_by("id"))
    assert [e.action for e in events] == ["team.member_add", "team.member_role", "team.member_remove"]
    assert events[1].before == {"user": "newcomer", "role": "viewer"} and events[1].after == {"user": "newcomer", "role": "editor"}
    assert all(e.actor_user == cast.owner for e in events)


def test_adding_a_member_twice_or_an_unknown_role_is_refused(cast):
    with pytest.raises(Conflict, match="member of team 'team-a' already \\(as editor\\)"):
        membership_add(actor=cast.p_owner, team=cast.team_a, user=cast.editor, role=Role.VIEWER)
    with pytest.raises(InvalidInput, match="Role must be one of"):
        membership_add(actor=cast.p_owner, team=cast.team_a, user=cast.outsider, role="owner")
    with pytest.raises(NotFound, match="outsider is not a member"):
        membership_remove(actor=cast.p_owner, team=cast.team_a, user=cast.outsider)


@pytest.mark.parametrize("member", ["editor", "viewer"])
def test_a_member_who_is_not_admin_cannot_change_members(cast, member):
    actor = Principal(user=getattr(cast, member))
    with pytest.raises(Forbidden, match="Only admins of team 'team-a'"):
        membership_add(actor=actor, team=cast.team_a, user=cast.outsider, role=Role.ADMIN)
    with pytest.raises(Forbidden):
        membership_set_role(actor=actor, team=cast.team_a, user=getattr(cast, member), role=Role.ADMIN)
    with pytest.raises(Forbidden):
        membership_remove(actor=actor, team=cast.team_a, user=cast.owner)
    assert team_role(cast.outsider, cast.team_a) is None and not AuditEvent.objects.exists()


def test_an_outsider_does_not_see_the_team_at_all(cast):
    with pytest.raises(NotFound, match="No team named 'team-a'"):
        team_get(cast.p_outsider, "team-a")
    with pytest.raises(NotFound, match="No team named 'team-a'"):  # the services say the same to other doors
        membership_add(actor=cast.p_outsider, team=cast.team_a, user=cast.outsider, role=Role.ADMIN)
    assert team_get(cast.p_viewer, "team-a") == cast.team_a


def test_a_token_cannot_change_members_even_its_admins(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="t", scopes=[cast.scope_a], can_write=True)
    with pytest.raises(Forbidden, match="API tokens cannot manage team members"):
        membership_add(actor=Principal.for_token(issued.token), team=cast.team_a, user=cast.outsider, role="viewer")


def test_the_last_admin_can_be_neither_removed_nor_demoted(cast):
    with pytest.raises(Conflict, match="last admin of team 'team-a'"):
        membership_remove(actor=cast.p_owner, team=cast.team_a, user=cast.owner)
    with pytest.raises(Conflict, match="Cannot demote owner: they are the last admin"):
        membership_set_role(actor=cast.p_owner, team=cast.team_a, user=cast.owner, role=Role.EDITOR)
    assert is_team_admin(cast.owner, cast.team_a)
    membership_set_role(actor=cast.p_owner, team=cast.team_a, user=cast.editor, role=Role.ADMIN)
    membership_remove(actor=cast.p_owner, team=cast.team_a, user=cast.owner)  # another admin now holds the team
    assert team_role(cast.owner, cast.team_a) is None and is_team_admin(cast.editor, cast.team_a)


# Two processes at once, for real: threads on their own connections to the test database, each
# slowed down inside its transaction so the other reaches the same point before it commits.


def at_once(*calls):
    barrier = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def run(i, call):
        try:
            barrier.wait()
            outcomes[i] = call()
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            outcomes[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


def slowed(monkeypatch, name, seconds=0.5):
    original = getattr(services, name)

    def slow(*args, **kwargs):
        result = original(*args, **kwargs)
        time.sleep(seconds)
        return result

    monkeypatch.setattr(services, name, slow)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("removals", ["each leaves", "each removes the other"])
def test_two_admins_leaving_at_once_leave_the_team_one_admin(cast, monkeypatch, removals):
    membership_set_role(actor=cast.p_owner, team=cast.team_a, user=cast.editor, role=Role.ADMIN)
    slowed(monkeypatch, "_audit")  # after the delete, before the commit
    owner, editor = (cast.owner, cast.editor) if removals == "each leaves" else (cast.editor, cast.owner)
    outcomes = at_once(
        lambda: membership_remove(actor=cast.p_owner, team=cast.team_a, user=owner),
        lambda: membership_remove(actor=cast.p_editor, team=cast.team_a, user=editor),
    )
    refused = [o for o in outcomes if isinstance(o, Exception)]
    assert len(refused) == 1 and isinstance(refused[0], Conflict | NotFound), outcomes
    assert Membership.objects.filter(team=cast.team_a, role=Role.ADMIN).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_processes_creating_the_same_user_make_one_user_with_one_personal_team(monkeypatch):
    slowed(monkeypatch, "personal_team_ensure")
    outcomes = at_once(
        lambda: user_create(username="ada", password="pw-ada-1234"),
        lambda: user_create(username="Ada", password="pw-ada-1234"),  # the same name to us
    )
    assert sum(isinstance(o, User) for o in outcomes) == 1
    assert sum(isinstance(o, Conflict) for o in outcomes) == 1, outcomes
    user = User.objects.get()
    assert Team.objects.get().personal_for == user and Membership.objects.get().user == user


@pytest.mark.django_db(transaction=True)
def test_two_processes_creating_the_same_team_make_one(monkeypatch):
    ada = user_create(username="ada", password=None)
    bob = user_create(username="bob", password=None)
    slowed(monkeypatch, "_audit")
    outcomes = at_once(
        lambda: team_create(actor=Principal(user=ada), slug="research"),
        lambda: team_create(actor=Principal(user=bob), slug="research"),
    )
    assert sum(isinstance(o, Team) for o in outcomes) == 1
    assert sum(isinstance(o, Conflict) for o in outcomes) == 1, outcomes
    team = Team.objects.get(slug="research")
    assert list(team.memberships.values_list("role", flat=True)) == [Role.ADMIN]
    assert AuditEvent.objects.filter(action="team.create").count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_processes_on_a_fresh_install_make_one_admin_and_one_password_file(settings, tmp_path, monkeypatch):
    settings.MEMORYWEB_HOME = tmp_path
    slowed(monkeypatch, "user_create")
    outcomes = at_once(local_admin_ensure, local_admin_ensure)
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    admin = User.objects.get(is_superuser=True)
    assert {o[0].pk for o in outcomes} == {admin.pk}
    passwords = [o[1] for o in outcomes if o[1] is not None]
    assert len(passwords) == 1  # only the process that created the admin knows its password
    path = tmp_path / "admin-password"
    assert path.read_text() == passwords[0] + "\n" and admin.check_password(passwords[0])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.django_db
def test_no_admin_is_left_without_its_password_file(settings, tmp_path, monkeypatch):
    settings.MEMORYWEB_HOME = tmp_path

    def unwritable(path, text):
        raise PermissionError(f"cannot write {path}")

    monkeypatch.setattr(services, "write_secret_file", unwritable)
    with pytest.raises(PermissionError):
        local_admin_ensure()
    assert not User.objects.exists() and not Team.objects.exists()


@pytest.mark.django_db
def test_a_stale_password_file_is_replaced_with_a_private_one(settings, tmp_path):
    settings.MEMORYWEB_HOME = tmp_path
    (tmp_path / "admin-password").write_text("old\n")
    (tmp_path / "admin-password").chmod(0o644)
    admin, password = local_admin_ensure()
    assert (tmp_path / "admin-password").read_text() == password + "\n"
    assert stat.S_IMODE((tmp_path / "admin-password").stat().st_mode) == 0o600
    assert local_admin_ensure() == (admin, None)
