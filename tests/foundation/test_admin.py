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
