import pytest
from django.utils import timezone

from accounts.models import Team
from accounts.permissions import Access, Principal, can
from accounts.tokens import token_issue
from memoryweb.errors import Forbidden, NotFound
from memories.scopes import scope_get, scopes_for


def slugs(principal, access):
    return set(scopes_for(principal, access).values_list("slug", flat=True))


def test_every_user_gets_a_personal_team_where_they_are_admin(cast):
    team = Team.objects.get(personal_for=cast.viewer)
    assert team.memberships.get(user=cast.viewer).role == "admin"


def test_roles_grant_read_write_admin_in_their_own_team(cast):
    assert slugs(cast.p_owner, Access.ADMIN) == {"alpha", "alpha-two"}
    assert slugs(cast.p_editor, Access.WRITE) == {"alpha", "alpha-two"}
    assert slugs(cast.p_editor, Access.ADMIN) == set()
    assert slugs(cast.p_viewer, Access.READ) == {"alpha", "alpha-two"}


def test_a_viewer_cannot_write(cast):
    assert slugs(cast.p_viewer, Access.WRITE) == set()
    with pytest.raises(Forbidden):
        scope_get(cast.p_viewer, "alpha", Access.WRITE)


@pytest.mark.parametrize("access", list(Access))
def test_a_member_of_team_a_cannot_touch_team_b_at_all(cast, access):
    assert "bravo" not in slugs(cast.p_owner, access)
    assert not can(cast.p_owner, cast.scope_b, access)
    with pytest.raises(NotFound):  # not 403: another team's scope does not exist for them
        scope_get(cast.p_owner, "bravo", access)
    assert slugs(cast.p_outsider, access) == {"bravo"}


def test_a_token_limited_to_scope_x_cannot_touch_scope_y_even_when_its_user_can(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="x-only", scopes=[cast.scope_a], can_write=True)
    principal = Principal.for_token(issued.token)
    assert slugs(principal, Access.READ) == {"alpha"}
    assert slugs(principal, Access.WRITE) == {"alpha"}
    with pytest.raises(NotFound):
        scope_get(principal, "alpha-two", Access.READ)
    assert scope_get(principal, "alpha", Access.WRITE) == cast.scope_a


def test_a_read_only_token_cannot_write_and_no_token_administers(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="reader", scopes=[cast.scope_a])
    principal = Principal.for_token(issued.token)
    assert slugs(principal, Access.WRITE) == set()
    assert slugs(principal, Access.ADMIN) == set()
    with pytest.raises(Forbidden):
        scope_get(principal, "alpha", Access.WRITE)


def test_a_token_naming_another_teams_scope_still_cannot_reach_it(cast):
    # Scopes on a token are a limit, never a grant.
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="sneaky", scopes=[cast.scope_a], can_write=True)
    issued.token.scopes.add(cast.scope_b)  # as if written behind the services' back
    principal = Principal.for_token(issued.token)
    assert slugs(principal, Access.READ) == {"alpha"}
    assert not can(principal, cast.scope_b, Access.READ)


def test_losing_membership_loses_access(cast):
    cast.team_a.memberships.filter(user=cast.viewer).delete()
    assert slugs(cast.p_viewer, Access.READ) == set()


def test_scope_get_answers_as_can_does_for_every_principal_scope_and_access(cast):
    """scope_get reads the scope, the role and the token's scopes in one statement of its own;
    it must decide as `can` does, for users, tokens (read-only, read+write, naming a scope of a
    team their user is not in), an inactive user's token, a revoked token and an expired one."""
    from datetime import timedelta

    from django.utils import timezone

    from accounts.models import ApiToken

    def token(name, scopes, **kwargs):
        return Principal.for_token(token_issue(actor=cast.p_owner, user=cast.owner, name=name, scopes=scopes, **kwargs).token)

    sneaky = token("sneaky", [cast.scope_a], can_write=True)
    sneaky.token.scopes.add(cast.scope_b)
    revoked, expired = token("revoked", [cast.scope_a], can_write=True), token("expired", [cast.scope_a], can_write=True)
    ApiToken.objects.filter(pk=revoked.token.pk).update(revoked_at=timezone.now())
    revoked.token.revoked_at = timezone.now()
    expired.token.expires_at = timezone.now() - timedelta(seconds=1)
    issued = token_issue(actor=cast.p_viewer, user=cast.viewer, name="gone", scopes=[cast.scope_a])
    gone = Principal.for_token(ApiToken.objects.select_related("user").get(pk=issued.token.pk))  # its own copy of the user
    gone.user.is_active = False
    cast.scope_a.settings = {"weights": {"recency": 0.1}}  # a JSON column read back as the ORM reads it
    cast.scope_a.save()
    principals = [cast.p_owner, cast.p_editor, cast.p_viewer, cast.p_outsider, token("ro", [cast.scope_a]),
                  token("rw", [cast.scope_a, cast.scope_a2], can_write=True), sneaky, revoked, expired, gone]
    for principal in principals:
        for scope in (cast.scope_a, cast.scope_a2, cast.scope_b):
            for access in Access:
                if not can(principal, scope, Access.READ):
                    expected = NotFound
                elif not can(principal, scope, access):
                    expected = Forbidden
                else:
                    expected = None
                try:
                    found = scope_get(principal, scope.slug, access)
                except (NotFound, Forbidden) as exc:
                    assert type(exc) is expected, (principal.label, scope.slug, access)
                else:
                    assert expected is None and found == scope, (principal.label, scope.slug, access)
                    assert found.settings == scope.settings and found.team_id == scope.team_id
    with pytest.raises(NotFound):
        scope_get(cast.p_owner, "no-such-scope")


def test_the_scope_read_with_the_token_decides_as_scope_get_s_own_read(cast):
    """The API reads the token and the scope its path names in one statement
    (`token_and_scope_read`); scope_get then takes that row, with no query of its own, and must
    decide exactly as with the row it reads itself: every token, scope and access, and no scope."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from accounts.models import ApiToken
    from accounts.tokens import token_authenticate
    from memories.scopes import token_and_scope_read

    def secret(name, scopes, **kwargs):
        return token_issue(actor=cast.p_owner, user=cast.owner, name=name, scopes=scopes, **kwargs).secret

    sneaky = secret("sneaky", [cast.scope_a], can_write=True)
    ApiToken.objects.get(name="sneaky").scopes.add(cast.scope_b)  # a scope of a team its user is not in
    secrets = [secret("ro", [cast.scope_a]), secret("rw", [cast.scope_a, cast.scope_a2], can_write=True), sneaky,
               token_issue(actor=cast.p_outsider, user=cast.outsider, name="o", scopes=[cast.scope_b], can_write=True).secret]

    def outcome(principal, slug, access):
        try:
            return scope_get(principal, slug, access).pk
        except (NotFound, Forbidden) as exc:
            return type(exc)

    for raw in secrets:
        for slug in ("alpha", "alpha-two", "bravo", "no-such-scope"):
            for access in Access:
                ahead = token_and_scope_read(raw, slug)
                assert ahead.read_ahead and ahead.token == token_authenticate(raw)
                with CaptureQueriesContext(connection) as queries:
                    decided = outcome(ahead, slug, access)
                assert not queries.captured_queries, queries.captured_queries
                assert decided == outcome(Principal.for_token(token_authenticate(raw)), slug, access), (raw[:12], slug, access)
                assert not ahead.read_ahead  # taken once: a second scope_get reads afresh
    assert token_and_scope_read(secrets[0][:-2] + "xx", "alpha") is None
    assert token_and_scope_read("mw_nope", "alpha") is None
    ApiToken.objects.filter(name="ro").update(revoked_at=timezone.now())
    from accounts.tokens import token_rows_recent_clear

    token_rows_recent_clear()  # as a second later: the row this process kept is read again
    assert token_and_scope_read(secrets[0], "alpha") is None


def test_a_token_s_row_is_read_once_a_second_and_a_revocation_here_is_seen_at_once(cast, monkeypatch):
    """An agent's calls within a second share one read of its token and scope; the secret is
    checked on every call, a revocation elsewhere (another process) is seen within the second,
    one through `token_revoke` in this process at once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from accounts import tokens
    from accounts.models import ApiToken
    from accounts.tokens import token_revoke
    from memories.scopes import token_and_scope_read

    clock = [1000.0]
    monkeypatch.setattr(tokens.time, "monotonic", lambda: clock[0])
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a])
    assert token_and_scope_read(issued.secret, "alpha") is not None  # its first use: last_used_at written, the row read again next
    with CaptureQueriesContext(connection) as first:
        assert token_and_scope_read(issued.secret, "alpha") is not None
    with CaptureQueriesContext(connection) as again:
        principal = token_and_scope_read(issued.secret, "alpha")
        scope = scope_get(principal, "alpha")
        assert scope.pk == cast.scope_a.pk
    assert len(first.captured_queries) == 1 and not again.captured_queries
    # Each call gets models of its own from the kept row: nothing one request changes reaches another.
    other = token_and_scope_read(issued.secret, "alpha")
    assert other.token is not principal.token and other.user is not principal.user
    assert scope_get(other, "alpha").settings is not scope.settings
    assert token_and_scope_read(issued.secret[:-2] + "xx", "alpha") is None  # the secret is checked every time
    assert token_and_scope_read(issued.secret, "alpha-two") is not None  # another scope: its own read
    # Revoked elsewhere: within the second the kept row still lets it in, after it not.
    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at=timezone.now())
    assert token_and_scope_read(issued.secret, "alpha") is not None
    clock[0] += tokens.RECENT_ROW_SECONDS
    assert token_and_scope_read(issued.secret, "alpha") is None
    # Revoked here: at once.
    other = token_issue(actor=cast.p_owner, user=cast.owner, name="other", scopes=[cast.scope_a])
    assert token_and_scope_read(other.secret, "alpha") is not None
    token_revoke(token=other.token, actor=cast.p_owner)
    assert token_and_scope_read(other.secret, "alpha") is None


def test_an_api_request_reads_its_token_and_scope_in_one_statement(cast):
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    raw = token_issue(actor=cast.p_owner, user=cast.owner, name="rw", scopes=[cast.scope_a], can_write=True).secret
    with CaptureQueriesContext(connection) as queries:
        response = Client().get("/api/v1/scopes/alpha/entities", headers={"Authorization": f"Bearer {raw}"})
    assert response.status_code == 200
    reads = [q["sql"] for q in queries.captured_queries  # the caller log's INSERT finds the scope by slug too
             if q["sql"].startswith("SELECT") and '"memories_scope"' in q["sql"] and "slug" in q["sql"]]
    assert len(reads) == 1 and '"accounts_apitoken"' in reads[0], reads
