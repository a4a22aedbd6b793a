"""The acceptance scenario of issue 3, end to end through the real offline extractor."""

import pytest

from memories.models import Entity, EntityAlias, Episode, EpisodeStatus, Fact, Mention, Session, Turn
from memories.services.facts import fact_history, fact_list
from memories.services.ingest import ingest_session, remember
from memories.services.resolve import Resolver

from .conftest import at

SCENARIO = [
    ("1", at(2023, 11, 5), "I love playing football"),
    ("2", at(2024, 3, 4), "I just started at Google as a software engineer in San Francisco"),
    ("3", at(2024, 9, 16), "I got promoted to senior engineer at Google"),
    ("4", at(2025, 2, 10), "I moved from San Francisco to New York"),
]
EXPECTED_ACTIVE = {
    ("ankesh", "likes", "football"),
    ("ankesh", "works_at", "Google"),
    ("ankesh", "role", "senior engineer"),
    ("ankesh", "lives_in", "New York"),
}


@pytest.fixture(autouse=True)
def offline(settings):
    settings.LLM_PROVIDER = "offline"


def _send(cast, committed):
    messages = [{"id": turn_id, "speaker": "ankesh", "text": text, "occurred_at": when.isoformat()} for turn_id, when, text in SCENARIO]
    with committed():
        return ingest_session(scope=cast.scope_a, session_id="ankesh-life", messages=messages, actor=cast.p_owner)


def _counts():
    return {model.__name__: model.objects.count() for model in (Session, Turn, Episode, Entity, EntityAlias, Fact, Mention)}


def test_the_scenario_gives_the_current_facts_and_their_history(cast, committed):
    counts = []
    for turn_id, when, text in SCENARIO:  # one at a time, so counts can be watched between them
        with committed():
            ingest_session(scope=cast.scope_a, session_id="ankesh-life",
                           messages=[{"id": turn_id, "speaker": "ankesh", "text": text, "occurred_at": when}], actor=cast.p_owner)
        counts.append(_counts())
    assert all(later[name] >= earlier[name] for earlier, later in zip(counts, counts[1:]) for name in later)  # nothing deleted
    assert set(Episode.objects.values_list("status", flat=True)) == {EpisodeStatus.DONE}

    assert {(f.subject.name, f.attribute, f.value) for f in fact_list(scope=cast.scope_a)} == EXPECTED_ACTIVE

    lives = list(fact_history(scope=cast.scope_a, entity_name_or_id="ankesh", attribute="lives_in"))
    assert [(f.value, f.status, f.valid_from, f.valid_to) for f in lives] == [
        ("San Francisco", "superseded", at(2024, 3, 4), at(2025, 2, 10)),
        ("New York", "active", at(2025, 2, 10), None),
    ]
    assert lives[1].supersedes == lives[0]

    roles = list(fact_history(scope=cast.scope_a, entity_name_or_id="ankesh", attribute="role"))
    assert [(f.value, f.status, f.valid_from, f.valid_to) for f in roles] == [
        ("software engineer", "superseded", at(2024, 3, 4), at(2024, 9, 16)),
        ("senior engineer", "active", at(2024, 9, 16), None),
    ]
    assert roles[1].supersedes == roles[0]

    # "I" is ankesh; Google is one entity however it is written.
    ankesh = Entity.objects.get(scope=cast.scope_a, name="ankesh")
    assert set(Fact.objects.values_list("subject", flat=True)) == {ankesh.pk}
    google = Entity.objects.get(scope=cast.scope_a, name="Google")
    assert google.kind == "organization"
    for name in ("Google", "google", "my company Google"):
        assert Resolver(scope=cast.scope_a, speaker="ankesh").resolve(name, kind="organization").entity == google
    assert Entity.objects.filter(scope=cast.scope_a, name__iexact="google").count() == 1
    assert Fact.objects.get(attribute="works_at").object_entity == google
    assert Mention.objects.filter(entity=google).count() == 2  # episodes 2 and 3


def test_sending_the_same_session_again_changes_nothing(cast, committed):
    _send(cast, committed)
    before = _counts()
    snapshot = sorted(Fact.objects.values_list("pk", "status", "valid_from", "valid_to"))
    again = _send(cast, committed)
    assert again.created == 0 and again.skipped == 4
    assert _counts() == before
    assert sorted(Fact.objects.values_list("pk", "status", "valid_from", "valid_to")) == snapshot


def test_the_same_statements_through_remember_give_the_same_facts(cast, committed):
    for _, when, text in SCENARIO:
        with committed():
            remember(scope=cast.scope_a, text=text, speaker="ankesh", occurred_at=when, actor=cast.p_owner)
    assert {(f.attribute, f.value) for f in fact_list(scope=cast.scope_a)} == {
        ("likes", "football"), ("works_at", "Google"), ("role", "senior engineer"), ("lives_in", "New York"),
    }
    assert Turn.objects.count() == 0


def test_small_talk_is_done_with_no_facts(cast, committed):
    with committed():
        result = remember(scope=cast.scope_a, text="hello there, how are you?", speaker="ankesh", actor=cast.p_owner)
    assert Episode.objects.get(public_id=result.episodes[0].episode_id).status == EpisodeStatus.DONE
    assert not Fact.objects.exists()
