"""token_issue and token_revoke authorise by themselves: a door passes the actor, the service refuses."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import ApiToken, AuditEvent
from accounts.permissions import Access, Principal
from accounts.tokens import token_issue, token_revoke
from memoryweb.errors import Forbidden, InvalidInput, NotFound
from memories.scopes import scope_get


def test_an_owner_issues_a_read_write_token_for_their_scope_and_it_is_audited(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a], can_write=True)
    assert list(issued.token.scopes.all()) == [cast.scope_a]
    event = AuditEvent.objects.get(action="token.create")
    assert event.actor_user == cast.owner and event.after["scopes"] == ["alpha"]


def test_a_viewer_cannot_issue_a_token_that_writes(cast):
    with pytest.raises(Forbidden, match="may not write scope 'alpha'"):
        token_issue(actor=cast.p_viewer, user=cast.viewer, name="w", scopes=[cast.scope_a], can_write=True)
    assert not ApiToken.objects.exists() and not AuditEvent.objects.exists()
    # Reading is theirs to delegate.
    token_issue(actor=cast.p_viewer, user=cast.viewer, name="r", scopes=[cast.scope_a])


def test_another_teams_scope_is_not_found(cast):
    with pytest.raises(NotFound):
        token_issue(actor=cast.p_owner, user=cast.owner, name="x", scopes=[cast.scope_a, cast.scope_b])
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("expires_at", [lambda: timezone.now() - timedelta(days=1), lambda: timezone.now()])
def test_an_expiry_that_is_not_in_the_future_is_refused(cast, expires_at):
    with pytest.raises(InvalidInput, match="future"):
        token_issue(actor=cast.p_owner, user=cast.owner, name="x", scopes=[cast.scope_a], expires_at=expires_at())


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_a_token_needs_a_sensible_name_and_a_scope(cast, name):
    with pytest.raises(InvalidInput):
        token_issue(actor=cast.p_owner, user=cast.owner, name=name, scopes=[cast.scope_a])
    with pytest.raises(InvalidInput, match="at least one scope"):
        token_issue(actor=cast.p_owner, user=cast.owner, name="x", scopes=[])


def test_a_token_cannot_issue_tokens(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a], can_write=True)
    with pytest.raises(Forbidden, match="API tokens cannot issue"):
        token_issue(actor=Principal.for_token(issued.token), user=cast.owner, name="child", scopes=[cast.scope_a])


def test_only_a_team_admin_issues_tokens_for_someone_else_and_never_beyond_their_rights(cast):
    with pytest.raises(Forbidden, match="Only admins"):
        token_issue(actor=cast.p_editor, user=cast.viewer, name="x", scopes=[cast.scope_a])
    with pytest.raises(Forbidden, match="viewer may not write"):
        token_issue(actor=cast.p_owner, user=cast.viewer, name="x", scopes=[cast.scope_a], can_write=True)
    issued = token_issue(actor=cast.p_owner, user=cast.viewer, name="for-viewer", scopes=[cast.scope_a])
    assert issued.token.user == cast.viewer


def test_a_token_principal_is_its_own_users(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a])
    with pytest.raises(ValueError):
        Principal(user=cast.outsider, token=issued.token)
    assert Principal.for_token(issued.token).user == cast.owner


def test_a_token_revoked_by_another_process_stops_working_here_within_a_second(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a], can_write=True)
    principal = Principal.for_token(issued.token)
    assert scope_get(principal, "alpha", Access.WRITE) == cast.scope_a
    # Another process revokes it: this process holds its own copy of the row.
    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at=timezone.now())
    time.sleep(1.05)
    with pytest.raises(NotFound):
        scope_get(principal, "alpha")


def test_revoking_needs_the_tokens_user_or_a_team_admin(cast):
    issued = token_issue(actor=cast.p_owner, user=cast.viewer, name="for-viewer", scopes=[cast.scope_a])
    with pytest.raises(NotFound):
        token_revoke(token=issued.token, actor=cast.p_outsider)
    with pytest.raises(NotFound):
        token_revoke(token=issued.token, actor=cast.p_editor)
    token_revoke(token=issued.token, actor=cast.p_viewer)
    token_revoke(token=issued.token, actor=cast.p_owner)  # idempotent: one audit event
    assert AuditEvent.objects.filter(action="token.revoke").count() == 1


def test_write_services_refuse_by_themselves_whatever_the_door(cast):
    # A door that forgot scope_get(…, WRITE) still cannot write through a viewer or an outsider.
    from memories.models import Episode
    from memories.services.ingest import ingest_session, remember

    with pytest.raises(Forbidden):
        remember(scope=cast.scope_a, text="I moved to Oslo", actor=cast.p_viewer)
    with pytest.raises(NotFound):
        remember(scope=cast.scope_a, text="I moved to Oslo", actor=cast.p_outsider)
    with pytest.raises(Forbidden):
        ingest_session(scope=cast.scope_a, session_id="s", messages=[{"id": "1", "text": "hi"}], actor=cast.p_viewer)
    read_only = token_issue(actor=cast.p_owner, user=cast.owner, name="ro", scopes=[cast.scope_a])
    with pytest.raises(Forbidden):
        remember(scope=cast.scope_a, text="x", actor=Principal.for_token(read_only.token))
    assert not Episode.objects.exists()
