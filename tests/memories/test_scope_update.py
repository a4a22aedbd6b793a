import pytest

from accounts.models import Role
from accounts.permissions import Principal
from accounts.services import membership_set
from accounts.tokens import token_issue
from memoryweb.errors import Forbidden, InvalidInput
from accounts.models import AuditEvent
from memories.scopes import scope_update


def test_an_admin_changes_weights_and_the_change_is_audited(cast):
    scope = scope_update(principal=cast.p_owner, scope=cast.scope_a, weights={"similarity": 1, "recency": 0})
    assert scope.settings == {"weights": {"similarity": 1.0, "recency": 0.0}}
    assert scope.weights["importance"] == 0.30  # the default, for the weight not given
    event = AuditEvent.objects.get(action="scope.update")
    assert event.before == {"weights": {}} and event.after == {"weights": {"similarity": 1.0, "recency": 0.0}}


def test_empty_weights_restore_the_defaults(cast):
    scope_update(principal=cast.p_owner, scope=cast.scope_a, weights={"recency": 0.5})
    scope = scope_update(principal=cast.p_owner, scope=cast.scope_a, weights={})
    assert scope.settings == {}


def test_nothing_changed_writes_nothing(cast):
    scope_update(principal=cast.p_owner, scope=cast.scope_a, name=cast.scope_a.name, team=cast.team_a)
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize("weights", [{"similarity": "0.9"}, {"similarity": True}, {"recency": -0.1}, {"other": 0.2}, "0.5"])
def test_a_bad_weight_is_refused_and_not_stored(cast, weights):
    with pytest.raises(InvalidInput):
        scope_update(principal=cast.p_owner, scope=cast.scope_a, weights=weights)
    cast.scope_a.refresh_from_db()
    assert cast.scope_a.settings == {} and not AuditEvent.objects.exists()


def test_an_editor_may_not_change_a_scope(cast):
    with pytest.raises(Forbidden):
        scope_update(principal=cast.p_editor, scope=cast.scope_a, name="Mine")


def test_a_token_may_not_change_a_scope(cast):
    token = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a], can_write=True).token
    with pytest.raises(Forbidden):
        scope_update(principal=Principal.for_token(token), scope=cast.scope_a, name="Mine")


def test_moving_a_scope_needs_admin_rights_in_both_teams(cast):
    with pytest.raises(Forbidden, match="team-b"):
        scope_update(principal=cast.p_owner, scope=cast.scope_a, team=cast.team_b)
    membership_set(team=cast.team_b, user=cast.owner, role=Role.EDITOR)
    with pytest.raises(Forbidden, match="team-b"):
        scope_update(principal=cast.p_owner, scope=cast.scope_a, team=cast.team_b)
    membership_set(team=cast.team_b, user=cast.owner, role=Role.ADMIN)
    scope = scope_update(principal=cast.p_owner, scope=cast.scope_a, team=cast.team_b)
    assert scope.team == cast.team_b
    event = AuditEvent.objects.get(action="scope.update")
    assert event.before == {"team": "team-a"} and event.after == {"team": "team-b"}
