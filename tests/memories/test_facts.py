"""People correcting, retracting and restoring facts: audited, scoped, nothing deleted."""

import pytest

from memoryweb.errors import Conflict, InvalidInput, NotFound
from accounts.models import AuditEvent
from memories.models import Embedding, Entity, Fact, FactStatus
from memories.services.facts import fact_correct, fact_get, fact_history, fact_list, fact_restore, fact_retract
from memories.services.reconcile import NewFact, fact_reconcile
from retrieval.models import SearchDocument

from .conftest import at


@pytest.fixture
def facts(cast):
    ankesh = Entity.objects.create(scope=cast.scope_a, name="ankesh", kind="person")
    made = {}
    for attribute, value, when in [("lives_in", "San Francisco", at(2024, 3)), ("lives_in", "New York", at(2024, 9)),
                                   ("works_at", "Gogle", at(2024, 3)), ("likes", "football", at(2024, 1))]:
        made[value] = fact_reconcile(
            scope=cast.scope_a, episode=None,
            new=NewFact(subject=ankesh, attribute=attribute, value=value, sentence=f"ankesh {attribute} {value}.", valid_from=when),
        ).fact
    for fact in made.values():
        fact.refresh_from_db()
    return made


def test_correcting_a_fact_supersedes_it_with_a_manual_one_and_audits_it(cast, facts, committed):
    wrong = facts["Gogle"]
    with committed():
        fixed = fact_correct(scope=cast.scope_a, fact_public_id=wrong.public_id, value="Google", actor=cast.p_editor)
    wrong.refresh_from_db()
    assert (fixed.value, fixed.sentence, fixed.provenance, fixed.author) == ("Google", "ankesh works_at Google.", "manual", cast.editor)
    assert fixed.supersedes == wrong and fixed.status == FactStatus.ACTIVE and fixed.valid_from == at(2024, 3)
    # The wrong belief is kept, ended where it began: it was never true.
    assert wrong.status == FactStatus.SUPERSEDED and wrong.valid_to == wrong.valid_from == at(2024, 3)
    event = AuditEvent.objects.get(action="fact.correct")
    assert event.actor_user == cast.editor and event.scope == cast.scope_a and event.target_id == str(wrong.public_id)
    assert event.before["value"] == "Gogle" and event.before["status"] == "active"
    assert event.after["value"] == "Google" and event.after["author"] == "editor"
    # The correction is searchable at once: indexed, with a vector.
    document = SearchDocument.objects.get(collection="fact", target_id=fixed.pk)
    assert Embedding.objects.filter(target_type="doc_fact", target_id=document.pk).exists()


def test_a_correction_may_change_the_sentence_or_the_attribute(cast, facts):
    fixed = fact_correct(scope=cast.scope_a, fact_public_id=facts["football"].public_id, sentence="ankesh loves football.",
                         actor=cast.p_owner)
    assert (fixed.value, fixed.sentence) == ("football", "ankesh loves football.")
    moved = fact_correct(scope=cast.scope_a, fact_public_id=fixed.public_id, attribute="plays", actor=cast.p_owner)
    assert moved.attribute == "plays" and moved.supersedes == fixed


def test_a_correction_that_changes_nothing_or_duplicates_an_active_fact_is_refused(cast, facts):
    with pytest.raises(InvalidInput, match="Nothing to correct"):
        fact_correct(scope=cast.scope_a, fact_public_id=facts["football"].public_id, value="football", actor=cast.p_owner)
    other = fact_reconcile(scope=cast.scope_a, episode=None, new=NewFact(
        subject=facts["football"].subject, attribute="likes", value="chess", sentence="s", valid_from=at(2024, 2))).fact
    with pytest.raises(Conflict, match="says that already"):
        fact_correct(scope=cast.scope_a, fact_public_id=other.public_id, value="Football", actor=cast.p_owner)
    with pytest.raises(Conflict, match="only an active fact"):
        fact_correct(scope=cast.scope_a, fact_public_id=facts["San Francisco"].public_id, value="LA", actor=cast.p_owner)
    assert not AuditEvent.objects.exists()


def test_retracting_ends_a_fact_without_removing_it_and_audits_it(cast, facts):
    count = Fact.objects.count()
    fact = fact_retract(scope=cast.scope_a, fact_public_id=facts["football"].public_id, actor=cast.p_owner, reason="wrong")
    assert fact.status == FactStatus.RETRACTED and fact.valid_to is not None
    assert Fact.objects.count() == count
    event = AuditEvent.objects.get(action="fact.retract")
    assert event.before["status"] == "active" and event.after["status"] == "retracted" and event.after["reason"] == "wrong"
    with pytest.raises(Conflict, match="retracted already"):
        fact_retract(scope=cast.scope_a, fact_public_id=fact.public_id, actor=cast.p_owner)


def test_restoring_a_superseded_single_valued_fact_ends_the_active_one(cast, facts):
    sf, ny = facts["San Francisco"], facts["New York"]
    restored = fact_restore(scope=cast.scope_a, fact_public_id=sf.public_id, actor=cast.p_owner)
    ny.refresh_from_db()
    assert restored.status == FactStatus.ACTIVE and restored.valid_to is None
    assert ny.status == FactStatus.SUPERSEDED and ny.valid_to is not None
    event = AuditEvent.objects.get(action="fact.restore")
    assert event.before["status"] == "superseded" and event.after["ended"] == [str(ny.public_id)]
    with pytest.raises(Conflict, match="active already"):
        fact_restore(scope=cast.scope_a, fact_public_id=sf.public_id, actor=cast.p_owner)


def test_restoring_a_retracted_multi_valued_fact_keeps_the_others(cast, facts):
    football = facts["football"]
    fact_reconcile(scope=cast.scope_a, episode=None, new=NewFact(
        subject=football.subject, attribute="likes", value="chess", sentence="s", valid_from=at(2024, 2)))
    fact_retract(scope=cast.scope_a, fact_public_id=football.public_id, actor=cast.p_owner)
    fact_restore(scope=cast.scope_a, fact_public_id=football.public_id, actor=cast.p_owner)
    assert sorted(f.value for f in fact_list(scope=cast.scope_a, entity="ankesh", attribute="likes")) == ["chess", "football"]


def test_history_shows_the_whole_chain_in_validity_order(cast, facts):
    chain = list(fact_history(scope=cast.scope_a, entity_name_or_id="Ankesh", attribute="lives_in"))
    assert [(f.value, f.status, f.valid_from, f.valid_to) for f in chain] == [
        ("San Francisco", "superseded", at(2024, 3), at(2024, 9)),
        ("New York", "active", at(2024, 9), None),
    ]
    by_id = list(fact_history(scope=cast.scope_a, entity_name_or_id=str(facts["New York"].subject.public_id)))
    assert len(by_id) == 4
    assert [f.value for f in fact_list(scope=cast.scope_a, entity="ankesh")] == ["football", "New York", "Gogle"]


def test_another_scopes_fact_or_entity_is_not_found(cast, facts):
    fact_id = facts["football"].public_id
    for call in (
        lambda: fact_get(scope=cast.scope_b, fact_public_id=fact_id),
        lambda: fact_correct(scope=cast.scope_b, fact_public_id=fact_id, value="x", actor=cast.p_outsider),
        lambda: fact_retract(scope=cast.scope_b, fact_public_id=fact_id, actor=cast.p_outsider),
        lambda: fact_restore(scope=cast.scope_a2, fact_public_id=fact_id, actor=cast.p_owner),
        lambda: fact_history(scope=cast.scope_b, entity_name_or_id="ankesh"),
        lambda: fact_get(scope=cast.scope_a, fact_public_id="not-a-uuid"),
    ):
        with pytest.raises(NotFound):
            call()
    assert Fact.objects.get(public_id=fact_id).status == FactStatus.ACTIVE
    assert not AuditEvent.objects.exists()
