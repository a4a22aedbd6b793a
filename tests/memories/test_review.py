"""Review before recall and the review queue: a fact extracted in a scope that reviews before
recall reaches no read (recall, answers, lists, history, the API) until a person approves it;
one below the scope's confidence threshold waits in the queue while it is already recalled."""

import pytest

from accounts.models import AuditEvent
from memoryweb.errors import Conflict, Forbidden, InvalidInput, NotFound
from memories.models import Fact, FactStatus, FactSupport, Review
from memories.scopes import scope_update
from memories.services.facts import fact_get, fact_history, fact_list, fact_list_for_episode
from memories.services.ingest import remember
from memories.services.review import (
    REJECTED_REASON, fact_approve, fact_reject, fact_review_correct, facts_approve, facts_reject, review_queue,
)
from retrieval.services import answer, recall
from tests.api.conftest import Api, tokens  # noqa: F401 (the API's token fixture)

pytestmark = pytest.mark.django_db


def say(cast, text: str, when: str, capture) -> None:
    with capture(execute=True):
        remember(scope=cast.scope_a, text=text, speaker="ankesh", occurred_at=when, actor=cast.p_owner)


@pytest.fixture
def reviewed(cast, django_capture_on_commit_callbacks):
    """Alpha knows ankesh lived in San Francisco, then starts reviewing before recall, and hears he moved to New York."""
    say(cast, "I live in San Francisco", "2024-01-10", django_capture_on_commit_callbacks)
    scope_update(principal=cast.p_owner, scope=cast.scope_a, review_before_recall=True)
    cast.scope_a.refresh_from_db()
    say(cast, "I moved to New York", "2025-02-10", django_capture_on_commit_callbacks)
    cast.sf = Fact.objects.get(scope=cast.scope_a, attribute="lives_in", value="San Francisco")
    cast.ny = Fact.objects.get(scope=cast.scope_a, attribute="lives_in", value="New York")
    return cast


def recalled_values(scope, query: str) -> set[str]:
    return {item.value for item in recall(scope=scope, query=query, k=10, include_history=True).items if item.kind == "fact"}


def test_a_held_fact_reaches_no_read_and_supersedes_nothing(reviewed):
    assert reviewed.ny.status == FactStatus.HELD and reviewed.ny.review == Review.PENDING
    reviewed.sf.refresh_from_db()
    assert reviewed.sf.status == FactStatus.ACTIVE  # still what the memory believes
    scope = reviewed.scope_a
    assert recalled_values(scope, "where does ankesh live? New York") == {"San Francisco"}
    assert "New York" not in answer(scope=scope, question="where does ankesh live?", speaker="ankesh").text
    assert [f.value for f in fact_list(scope=scope, attribute="lives_in")] == ["San Francisco"]
    assert "New York" not in {f.value for f in fact_history(scope=scope, attribute="lives_in")}
    assert not fact_list_for_episode(scope=scope, episode=reviewed.ny.source_episode).exists()
    with pytest.raises(NotFound):
        fact_get(scope=scope, fact_public_id=reviewed.ny.public_id)
    assert [f.pk for f in review_queue(principal=reviewed.p_viewer, scope=scope)] == [reviewed.ny.pk]


def test_the_raw_words_stay_searchable_while_the_fact_is_held(reviewed):
    kinds = {item.kind for item in recall(scope=reviewed.scope_a, query="New York", k=10).items if "New York" in item.text}
    assert kinds == {"episode"}


def test_the_api_recalls_a_held_fact_only_once_approved(reviewed, tokens):
    api = Api(tokens["ro"])

    def api_values():
        body = api.post("/scopes/alpha/recall", {"query": "where does ankesh live? New York", "include_history": True}).json()
        return {item.get("value") for item in body["results"] if item["kind"] == "fact"}

    assert "New York" not in api_values()
    fact_approve(principal=reviewed.p_editor, scope=reviewed.scope_a, fact_public_id=reviewed.ny.public_id)
    assert "New York" in api_values()


def test_approving_a_held_fact_reconciles_it_then(reviewed):
    scope = reviewed.scope_a
    approved = fact_approve(principal=reviewed.p_editor, scope=scope, fact_public_id=reviewed.ny.public_id)
    reviewed.sf.refresh_from_db()
    assert approved.status == FactStatus.ACTIVE and approved.review == Review.APPROVED and approved.supersedes == reviewed.sf
    assert reviewed.sf.status == FactStatus.SUPERSEDED
    assert "New York" in recalled_values(scope, "where does ankesh live? New York")
    assert "New York" in answer(scope=scope, question="where does ankesh live?", speaker="ankesh").text
    event = AuditEvent.objects.get(action="fact.approve")
    assert event.actor_user == reviewed.editor and event.before["status"] == "held" and event.after["status"] == "active"
    assert not review_queue(principal=reviewed.p_owner, scope=scope).exists()


def test_saying_a_held_value_again_supports_it_instead_of_holding_it_twice(reviewed, django_capture_on_commit_callbacks):
    say(reviewed, "I live in New York", "2025-03-01", django_capture_on_commit_callbacks)
    assert Fact.objects.filter(scope=reviewed.scope_a, value="New York").count() == 1
    assert FactSupport.objects.filter(fact=reviewed.ny).count() == 1


def test_rejecting_retracts_with_the_reason_and_leaves_the_old_value(reviewed):
    rejected = fact_reject(principal=reviewed.p_editor, scope=reviewed.scope_a, fact_public_id=reviewed.ny.public_id)
    reviewed.sf.refresh_from_db()
    assert rejected.status == FactStatus.RETRACTED and rejected.review == Review.REJECTED and rejected.valid_to is not None
    assert reviewed.sf.status == FactStatus.ACTIVE
    assert AuditEvent.objects.get(action="fact.reject").after["reason"] == REJECTED_REASON
    with pytest.raises(Conflict):
        fact_approve(principal=reviewed.p_editor, scope=reviewed.scope_a, fact_public_id=reviewed.ny.public_id)


def test_correcting_in_review_approves_and_corrects_in_one_step(reviewed):
    corrected = fact_review_correct(principal=reviewed.p_editor, scope=reviewed.scope_a, fact_public_id=reviewed.ny.public_id,
                                    value="Brooklyn")
    reviewed.ny.refresh_from_db()
    assert corrected.value == "Brooklyn" and corrected.status == FactStatus.ACTIVE and corrected.provenance == "manual"
    assert reviewed.ny.review == Review.APPROVED and reviewed.ny.status == FactStatus.SUPERSEDED


def test_a_bad_correction_in_review_approves_nothing(reviewed):
    with pytest.raises(InvalidInput):
        fact_review_correct(principal=reviewed.p_editor, scope=reviewed.scope_a, fact_public_id=reviewed.ny.public_id, value="  ")
    reviewed.ny.refresh_from_db()
    assert reviewed.ny.status == FactStatus.HELD and reviewed.ny.review == Review.PENDING


def test_a_low_confidence_fact_is_recalled_but_waits_in_the_queue(cast, django_capture_on_commit_callbacks):
    scope_update(principal=cast.p_owner, scope=cast.scope_a, review_threshold=0.95)
    cast.scope_a.refresh_from_db()
    say(cast, "I work at Initech", "2025-01-01", django_capture_on_commit_callbacks)
    fact = Fact.objects.get(scope=cast.scope_a, attribute="works_at")
    assert fact.status == FactStatus.ACTIVE and fact.review == Review.PENDING
    assert "Initech" in recalled_values(cast.scope_a, "where does ankesh work? Initech")
    facts_reject(principal=cast.p_owner, scope=cast.scope_a, fact_public_ids=[fact.public_id])
    assert "Initech" not in recalled_values(cast.scope_a, "where does ankesh work? Initech")


def test_facts_confident_enough_or_in_an_ordinary_scope_do_not_wait(cast, django_capture_on_commit_callbacks):
    say(cast, "I work at Initech", "2025-01-01", django_capture_on_commit_callbacks)
    assert Fact.objects.get(scope=cast.scope_a, attribute="works_at").review == Review.NONE
    assert not review_queue(principal=cast.p_owner, scope=cast.scope_a).exists()


def test_bulk_approval_skips_what_was_decided_meanwhile(reviewed, django_capture_on_commit_callbacks):
    say(reviewed, "I work at Initech", "2025-03-01", django_capture_on_commit_callbacks)
    work = Fact.objects.get(scope=reviewed.scope_a, attribute="works_at")
    fact_reject(principal=reviewed.p_owner, scope=reviewed.scope_a, fact_public_id=reviewed.ny.public_id)
    done = facts_approve(principal=reviewed.p_owner, scope=reviewed.scope_a, fact_public_ids=[reviewed.ny.public_id, work.public_id])
    assert [f.pk for f in done] == [work.pk]
    with pytest.raises(InvalidInput):
        facts_approve(principal=reviewed.p_owner, scope=reviewed.scope_a, fact_public_ids=[])


def test_viewers_may_look_but_not_decide_and_other_teams_see_nothing(reviewed):
    scope, fact_id = reviewed.scope_a, reviewed.ny.public_id
    for decide in (fact_approve, fact_reject):
        with pytest.raises(Forbidden):
            decide(principal=reviewed.p_viewer, scope=scope, fact_public_id=fact_id)
        with pytest.raises(NotFound):
            decide(principal=reviewed.p_outsider, scope=scope, fact_public_id=fact_id)
    with pytest.raises(NotFound):
        review_queue(principal=reviewed.p_outsider, scope=scope)
    with pytest.raises(NotFound):
        fact_approve(principal=reviewed.p_outsider, scope=reviewed.scope_b, fact_public_id=fact_id)
    reviewed.ny.refresh_from_db()
    assert reviewed.ny.status == FactStatus.HELD


@pytest.mark.parametrize(("changes", "message"), [
    ({"review_threshold": 1.5}, "from 0 to 1"),
    ({"review_threshold": True}, "from 0 to 1"),
    ({"review_before_recall": "yes"}, "true or false"),
])
def test_review_settings_are_validated(cast, changes, message):
    with pytest.raises(InvalidInput, match=message):
        scope_update(principal=cast.p_owner, scope=cast.scope_a, **changes)


def test_only_team_admins_change_review_settings_and_it_is_audited(cast):
    with pytest.raises(Forbidden):
        scope_update(principal=cast.p_editor, scope=cast.scope_a, review_before_recall=True)
    scope = scope_update(principal=cast.p_owner, scope=cast.scope_a, review_threshold=0.5, review_before_recall=True)
    assert scope.review_threshold == 0.5 and scope.review_before_recall is True
    event = AuditEvent.objects.get(action="scope.update")
    assert event.after == {"review_threshold": 0.5, "review_before_recall": True}
