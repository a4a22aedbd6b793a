from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import token_authenticate, token_issue, token_revoke


@pytest.fixture
def issued(cast):
    return token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a], can_write=True)


def test_the_secret_is_not_stored_anywhere_in_the_row(issued):
    row = ApiToken.objects.values().get(pk=issued.token.pk)
    # mw_<prefix>_<secret>: the secret may hold "_" itself, so what follows the last one can be
    # a character or two that any column might contain.
    secret_part = issued.secret.split("_", 2)[2]
    assert len(secret_part) >= 32
    for value in row.values():
        assert secret_part not in str(value)
    assert row["secret_hash"] != issued.secret and len(row["secret_hash"]) == 64
    with connection.cursor() as cursor:  # nor in any other column the ORM might hide
        cursor.execute("SELECT * FROM accounts_apitoken WHERE id = %s", [issued.token.pk])
        assert not any(secret_part in str(v) for v in cursor.fetchone())


def test_the_right_token_authenticates_by_its_prefix_and_records_use(issued):
    assert issued.secret.startswith(f"mw_{issued.token.prefix}_")
    token = token_authenticate(issued.secret)
    assert token == issued.token
    token.refresh_from_db()
    assert token.last_used_at is not None


@pytest.mark.parametrize("mangle", [
    lambda s: s[:-1] + ("A" if s[-1] != "A" else "B"),  # wrong secret, right prefix
    lambda s: "mw_000000000000_" + s.rsplit("_", 1)[1],  # unknown prefix
    lambda s: s.replace("mw_", "xx_", 1),
    lambda s: "",
    lambda s: "mw_",
    lambda s: "Bearer " + s,
])
def test_a_wrong_token_is_refused(issued, mangle):
    assert token_authenticate(mangle(issued.secret)) is None


def test_a_revoked_token_is_refused(issued, cast):
    token_revoke(token=issued.token, actor=cast.p_owner)
    assert token_authenticate(issued.secret) is None


def test_an_expired_token_is_refused(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="old", scopes=[cast.scope_a], expires_at=timezone.now() + timedelta(seconds=60))
    assert token_authenticate(issued.secret) is not None
    ApiToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert token_authenticate(issued.secret) is None


def test_a_token_of_a_deactivated_user_is_refused(issued, cast):
    cast.owner.is_active = False
    cast.owner.save()
    assert token_authenticate(issued.secret) is None
