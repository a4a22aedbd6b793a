import pytest

from accounts.models import AuditEvent
from memories.models import Entity, Fact
from memories.services.facts import fact_set_importance
from memoryweb.errors import InvalidInput, NotFound


@pytest.fixture
def fact(cast):
    subject = Entity.objects.create(scope=cast.scope_a, name="ankesh")
    return Fact.objects.create(scope=cast.scope_a, subject=subject, attribute="likes", value="tea", value_normalized="tea",
                               sentence="ankesh likes tea.", importance=0.5)


def test_setting_a_facts_importance_is_audited_with_before_and_after(cast, fact):
    changed = fact_set_importance(scope=cast.scope_a, fact_public_id=fact.public_id, importance="0.8", actor=cast.p_editor)
    assert changed.importance == 0.8
    event = AuditEvent.objects.get(action="fact.importance")
    assert (event.actor_user, event.before, event.after) == (cast.editor, {"importance": 0.5}, {"importance": 0.8})


def test_the_same_importance_again_changes_and_audits_nothing(cast, fact):
    fact_set_importance(scope=cast.scope_a, fact_public_id=fact.public_id, importance=0.5, actor=cast.p_editor)
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize("importance", ["-0.1", "1.01", "nan", "lots", None])
def test_importance_is_a_number_from_0_to_1(cast, fact, importance):
    with pytest.raises(InvalidInput):
        fact_set_importance(scope=cast.scope_a, fact_public_id=fact.public_id, importance=importance, actor=cast.p_editor)


def test_another_scopes_fact_is_not_found(cast, fact):
    with pytest.raises(NotFound):
        fact_set_importance(scope=cast.scope_b, fact_public_id=fact.public_id, importance=0.9, actor=cast.p_outsider)
