"""The acceptance scenario through recorded `ollama` and `openai` answers, replayed over HTTP to
the real client libraries: a real model's extraction and reconciliation decisions give the same
facts and history as the offline extractor."""

import pytest

from memories.models import Episode, EpisodeStatus
from memories.services.facts import fact_history, fact_list
from memories.services.ingest import ingest_session
from tests.replay import replay_server  # noqa: F401  (a fixture)

from .test_scenario import EXPECTED_ACTIVE, SCENARIO


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_the_scenario_through_a_recorded_model_gives_the_same_facts(provider, replay_server, settings, cast, committed):  # noqa: F811
    server = replay_server()
    server.configure(settings, provider)
    for turn_id, when, text in SCENARIO:
        with committed():
            ingest_session(scope=cast.scope_a, session_id="ankesh-life",
                           messages=[{"id": turn_id, "speaker": "ankesh", "text": text, "occurred_at": when}], actor=cast.p_owner)

    assert set(Episode.objects.values_list("status", flat=True)) == {EpisodeStatus.DONE}
    path = "/api/chat" if provider == "ollama" else "/v1/chat/completions"
    assert len(server.chats(path)) >= 4  # the model really was asked, once per statement at least

    assert {(f.subject.name, f.attribute, f.value) for f in fact_list(scope=cast.scope_a)} == EXPECTED_ACTIVE
    lives = list(fact_history(scope=cast.scope_a, entity_name_or_id="ankesh", attribute="lives_in"))
    assert [(f.value, f.status) for f in lives] == [("San Francisco", "superseded"), ("New York", "active")]
    assert lives[0].valid_to is not None and lives[1].supersedes == lives[0]
    roles = list(fact_history(scope=cast.scope_a, entity_name_or_id="ankesh", attribute="role"))
    assert [(f.value, f.status) for f in roles] == [("software engineer", "superseded"), ("senior engineer", "active")]
