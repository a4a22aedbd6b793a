import pytest

from accounts.models import ApiToken
from accounts.services import user_create
from accounts.tokens import token_issue
from accounts.models import AuditEvent


@pytest.fixture
def admin_client(client, cast):
    admin = user_create(username="root", password="pw-root-1234", is_admin=True)
    client.force_login(admin)
    return client


@pytest.mark.parametrize("path", ["accounts/user", "accounts/team", "accounts/membership", "accounts/apitoken", "memories/scope"])
def test_admin_lists_every_account_model(admin_client, path):
    assert admin_client.get(f"/admin/{path}/").status_code == 200


def test_the_token_admin_never_shows_the_secret_or_its_hash(admin_client, cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a])
    page = admin_client.get(f"/admin/accounts/apitoken/{issued.token.pk}/change/").content.decode()
    assert issued.token.prefix in page
    assert issued.secret not in page and issued.token.secret_hash not in page


def test_the_revoke_action_revokes(admin_client, cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a])
    response = admin_client.post(
        "/admin/accounts/apitoken/", {"action": "revoke", "_selected_action": [issued.token.pk]}, follow=True
    )
    assert response.status_code == 200
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is not None
    event = AuditEvent.objects.get(action="token.revoke")  # an admin's revocation is audited like any other
    assert event.actor_user.username == "root" and event.target_id == str(issued.token.public_id)


def test_a_non_staff_user_cannot_open_the_admin(client, cast):
    client.force_login(cast.owner)
    assert client.get("/admin/accounts/apitoken/").status_code == 302


# The admin is for operators: a staff user who is not a superuser is refused everywhere, even a
# team admin holding every model permission (so only the site's gate stands in the way).

@pytest.fixture
def staff_team_admin(client, cast):
    from django.contrib.auth.models import Permission

    cast.owner.is_staff = True
    cast.owner.save()
    cast.owner.user_permissions.set(Permission.objects.all())
    client.force_login(cast.owner)
    return client


@pytest.mark.parametrize("which", ["scope_a", "scope_b"])  # their own team's row and another team's
def test_a_staff_team_admin_is_refused_the_list_the_change_page_and_a_forged_post(staff_team_admin, cast, which):
    scope = getattr(cast, which)
    url = f"/admin/memories/scope/{scope.pk}/change/"
    assert staff_team_admin.get("/admin/").status_code == 302
    assert staff_team_admin.get("/admin/memories/scope/").status_code == 302
    assert staff_team_admin.get(url).status_code == 302
    response = staff_team_admin.post(url, {"name": "Taken", "description": "", "team": cast.team_a.pk, "weights": '{"recency": 1}'})
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    scope.refresh_from_db()
    assert scope.name != "Taken" and scope.settings == {} and scope.team_id == getattr(cast, "team_a" if which == "scope_a" else "team_b").pk
    assert not AuditEvent.objects.exists()


def test_a_staff_team_admin_cannot_run_an_action_or_delete_by_a_forged_post(staff_team_admin, cast):
    issued = token_issue(actor=cast.p_outsider, user=cast.outsider, name="agent", scopes=[cast.scope_b])
    response = staff_team_admin.post("/admin/accounts/apitoken/", {"action": "revoke", "_selected_action": [issued.token.pk]})
    assert response.status_code == 302
    response = staff_team_admin.post(f"/admin/accounts/membership/{cast.team_b.memberships.get().pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is None
    assert cast.team_b.memberships.filter(user=cast.outsider, role="admin").exists()


def test_an_inactive_superuser_is_refused(client, cast):
    root = user_create(username="root", password="pw-root-1234", is_admin=True)
    root.is_active = False
    root.save()
    client.force_login(root)
    assert client.get("/admin/memories/scope/").status_code == 302


# Every change made in the admin goes through an audited service.

def _scope_post(scope, **overrides) -> dict:
    data = {"name": scope.name, "description": scope.description, "team": scope.team_id, "weights": "{}"}
    return {**data, **overrides}


def test_a_superuser_edits_a_scopes_weights_through_the_audited_service(admin_client, cast):
    from accounts.models import Role
    from accounts.services import membership_set
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.get(username="root")
    membership_set(team=cast.team_a, user=root, role=Role.ADMIN)
    url = f"/admin/memories/scope/{cast.scope_a.pk}/change/"
    assert admin_client.get(url).status_code == 200
    response = admin_client.post(url, _scope_post(cast.scope_a, weights='{"similarity": 0.5, "importance": 0.4, "recency": 0.1}'))
    assert response.status_code == 302, response.content.decode()
    cast.scope_a.refresh_from_db()
    assert cast.scope_a.settings == {"weights": {"similarity": 0.5, "importance": 0.4, "recency": 0.1}}
    event = AuditEvent.objects.get(action="scope.update")
    assert event.actor_user == root and event.scope == cast.scope_a and event.target_id == str(cast.scope_a.public_id)
    assert event.before == {"weights": {}}
    assert event.after == {"weights": {"similarity": 0.5, "importance": 0.4, "recency": 0.1}}


@pytest.mark.parametrize("weights, message", [
    ('{"similarity": "0.9"}', "Weight &#x27;similarity&#x27; must be a number from 0 to 1."),
    ('{"recency": 1.5}', "Weight &#x27;recency&#x27; must be a number from 0 to 1."),
    ('{"freshness": 0.5}', "Unknown weight(s): freshness"),
    ('[0.5]', "Weights must be an object"),
])
def test_a_bad_weight_is_refused_on_the_form_and_not_stored(admin_client, cast, weights, message):
    from accounts.models import Role
    from accounts.services import membership_set
    from django.contrib.auth import get_user_model

    membership_set(team=cast.team_a, user=get_user_model().objects.get(username="root"), role=Role.ADMIN)
    response = admin_client.post(f"/admin/memories/scope/{cast.scope_a.pk}/change/", _scope_post(cast.scope_a, weights=weights))
    assert response.status_code == 200  # the form again, with the message
    assert message in response.content.decode()
    cast.scope_a.refresh_from_db()
    assert cast.scope_a.settings == {}
    assert not AuditEvent.objects.exists()


def test_a_superuser_who_does_not_administer_the_team_is_told_so_and_nothing_changes(admin_client, cast):
    response = admin_client.post(f"/admin/memories/scope/{cast.scope_b.pk}/change/", _scope_post(cast.scope_b, name="Renamed"))
    assert response.status_code == 200
    assert "Only admins of team &#x27;team-b&#x27; can change its scopes." in response.content.decode()
    cast.scope_b.refresh_from_db()
    assert cast.scope_b.name == "Bravo" and not AuditEvent.objects.exists()


def test_a_tokens_fields_cannot_be_changed_by_a_forged_post(admin_client, cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a])
    url = f"/admin/accounts/apitoken/{issued.token.pk}/change/"
    assert admin_client.get(url).status_code == 200  # shown, read-only
    response = admin_client.post(url, {
        "name": "renamed", "scopes": [cast.scope_a.pk, cast.scope_a2.pk, cast.scope_b.pk], "can_write": "on",
        "expires_at_0": "2099-01-01", "expires_at_1": "00:00:00",
    })
    assert response.status_code == 403
    token = ApiToken.objects.get(pk=issued.token.pk)
    assert token.name == "agent" and not token.can_write and token.expires_at is None
    assert list(token.scopes.all()) == [cast.scope_a]


@pytest.mark.parametrize("path", ["accounts/membership", "accounts/team", "memories/scope", "accounts/apitoken"])
def test_rows_that_change_only_through_services_cannot_be_added_in_the_admin(admin_client, path):
    assert admin_client.get(f"/admin/{path}/add/").status_code == 403


def test_the_admin_cannot_remove_a_teams_last_admin(admin_client, cast):
    membership = cast.team_b.memberships.get(user=cast.outsider)
    url = f"/admin/accounts/membership/{membership.pk}/"
    assert admin_client.post(url + "change/", {"user": cast.outsider.pk, "team": cast.team_b.pk, "role": "viewer"}).status_code == 403
    assert admin_client.post(url + "delete/", {"post": "yes"}).status_code == 403
    response = admin_client.post("/admin/accounts/membership/", {"action": "delete_selected", "_selected_action": [membership.pk], "post": "yes"})
    assert response.status_code == 200  # no such action here: the list again, with an error
    assert admin_client.post(f"/admin/accounts/user/{cast.outsider.pk}/delete/", {"post": "yes"}).status_code == 403
    membership.refresh_from_db()
    assert membership.role == "admin"


def test_editing_an_account_in_the_admin_is_audited_with_what_changed(admin_client, cast):
    url = f"/admin/accounts/user/{cast.viewer.pk}/change/"
    form = {
        "username": "viewer", "email": "viewer@example.com", "first_name": "", "last_name": "",
        "is_staff": "", "is_active": "", "last_login_0": "", "last_login_1": "",
        "date_joined_0": "2025-01-01", "date_joined_1": "12:00:00",
    }
    response = admin_client.post(url, form)
    assert response.status_code == 302, response.content.decode()[:2000]
    cast.viewer.refresh_from_db()
    assert not cast.viewer.is_active
    event = AuditEvent.objects.get(action="user.change")
    assert event.actor_user.username == "root" and event.target_id == str(cast.viewer.public_id)
    assert event.before["is_active"] is True and event.after["is_active"] is False
    assert event.after["email"] == "viewer@example.com" and "password" not in event.after

    response = admin_client.post(f"/admin/accounts/user/{cast.viewer.pk}/password/",
                                 {"password1": "a-new-pw-9876", "password2": "a-new-pw-9876", "usable_password": "true"})
    assert response.status_code == 302
    changed = AuditEvent.objects.get(action="user.password")
    assert changed.after == {"password": "changed"} and "a-new-pw" not in str(changed.before) + str(changed.after)
