"""Extraction and reconcile decisions asked of a language model: the real `ollama` and `openai`
clients against the replay server, through `memories.extraction.extractors.ModelExtractor`."""

import uuid
from datetime import UTC, datetime

import pytest

from memoryweb.providers.llm import LLMError
from memories.extraction import offline
from memories.extraction.extractors import ModelExtractor, OfflineExtractor, extractor_get
from memories.extraction.schemas import ExtractedFact, ReconcileDecision
from tests.replay import replay_server  # noqa: F401  (a fixture)

SAID_AT = datetime(2024, 6, 15, 10, 0, tzinfo=UTC)
SCENARIO = [
    "I love playing football",
    "I just started at Google as a software engineer in San Francisco",
    "I got promoted to senior engineer at Google",
    "I moved from San Francisco to New York",
]
CHAT_PATH = {"ollama": "/api/chat", "openai": "/v1/chat/completions"}
PROVIDERS = ["ollama", "openai"]


def key(facts) -> set[tuple]:
    return {(f.subject, f.attribute, f.value, f.object_entity, f.object_kind, f.previous_value, f.negated) for f in facts}


@pytest.fixture(params=PROVIDERS)
def remote(request, replay_server, settings):  # noqa: F811
    """(provider, server, extractor) for each remote provider, pointed at the recordings."""
    server = replay_server()
    server.configure(settings, request.param)
    extractor = extractor_get()
    assert isinstance(extractor, ModelExtractor)
    return request.param, server, extractor


@pytest.mark.parametrize("text", SCENARIO)
def test_the_scenario_gives_the_same_facts_as_the_offline_extractor(remote, text):
    _, _, extractor = remote
    remote_extraction = extractor.extract(text=text, speaker="ankesh", occurred_at=SAID_AT)
    offline_extraction = offline.extract(text=text, speaker="ankesh", occurred_at=SAID_AT)
    assert remote_extraction.facts, "the recording gave no facts"
    assert key(remote_extraction.facts) == key(offline_extraction.facts)
    # Entities the model forgot to list are added, so both name the same things.
    assert {(e.name, e.kind) for e in remote_extraction.entities} == {(e.name, e.kind) for e in offline_extraction.entities}


def test_ollama_is_asked_for_schema_constrained_json(replay_server, settings):  # noqa: F811
    server = replay_server()
    server.configure(settings, "ollama")
    extractor_get().extract(text="I love playing football", speaker="ankesh", occurred_at=SAID_AT)
    (body,) = server.chats("/api/chat")
    assert body["model"] == "llama3.1:8b" and body["stream"] is False
    assert body["format"]["type"] == "object" and "facts" in body["format"]["properties"]
    assert "$defs" not in str(body["format"]) and "$ref" not in str(body["format"])
    assert body["options"]["temperature"] == 0
    system, user = body["messages"]
    assert system["role"] == "system" and "lives_in" in system["content"] and "previous_value" in system["content"]
    assert "Speaker: ankesh" in user["content"] and "2024-06-15T10:00:00+00:00" in user["content"]
    assert "I love playing football" in user["content"]


def test_openai_is_asked_for_a_json_object(replay_server, settings):  # noqa: F811
    server = replay_server()
    server.configure(settings, "openai")
    extractor_get().extract(text="I love playing football", speaker="ankesh", occurred_at=SAID_AT)
    (body,) = server.chats("/v1/chat/completions")
    assert body["model"] == "gpt-4o-mini"
    assert body["response_format"] == {"type": "json_object"}
    assert "JSON" in body["messages"][0]["content"]  # JSON mode requires the word in the prompt


def test_dates_from_a_model_become_aware_datetimes(remote):
    _, _, extractor = remote
    extraction = extractor.extract(text="I moved to Berlin in March 2024", speaker="ankesh", occurred_at=SAID_AT)
    (fact,) = extraction.facts
    assert fact.valid_from == datetime(2024, 3, 1, tzinfo=UTC)
    assert extraction.occurred_at == datetime(2024, 3, 1, tzinfo=UTC)


def test_small_talk_gives_no_facts(remote):
    _, _, extractor = remote
    extraction = extractor.extract(text="Hey Mel! Good to see you! How have you been?", speaker="mel", occurred_at=SAID_AT)
    assert extraction.facts == [] and extraction.importance <= 0.2


# --- invalid output: re-asked, then a permanent failure ------------------------------------------------------


def test_invalid_then_schema_invalid_then_valid_succeeds_on_the_third_attempt(remote):
    provider, server, extractor = remote
    extraction = extractor.extract(text="I adopted a cat named Miso", speaker="ankesh", occurred_at=SAID_AT)
    assert key(extraction.facts) == {("ankesh", "has_pet", "Miso", "Miso", "other", None, False)}
    attempts = server.chats(CHAT_PATH[provider])
    assert len(attempts) == 3
    # Each retry resends the conversation with the bad reply and what was wrong with it.
    second, third = attempts[1]["messages"], attempts[2]["messages"]
    assert second[-2]["role"] == "assistant" and second[-2]["content"].startswith("Sure! Here are")
    assert second[-1]["role"] == "user" and "not JSON" in second[-1]["content"]
    assert "does not match the Extraction schema" in third[-1]["content"]
    assert "facts.0.value: Field required" in third[-1]["content"]
    assert len(third) == 6


def test_always_invalid_output_fails_after_the_configured_attempts(remote, settings):
    provider, server, extractor = remote
    with pytest.raises(LLMError) as failure:
        extractor.extract(text="My favorite color is blue", speaker="ankesh", occurred_at=SAID_AT)
    assert "returned invalid JSON 3 times" in str(failure.value)
    assert "not JSON" in str(failure.value) and "I'm sorry" in str(failure.value)
    assert failure.value.retryable is False
    assert len(server.chats(CHAT_PATH[provider])) == 3

    settings.LLM_MAX_ATTEMPTS = 2
    with pytest.raises(LLMError, match="returned invalid JSON 2 times"):
        extractor_get().extract(text="My favorite color is blue", speaker="ankesh", occurred_at=SAID_AT)
    assert len(server.chats(CHAT_PATH[provider])) == 5


# --- reconciliation decisions ---------------------------------------------------------------

NEW_YORK = ExtractedFact(
    subject="ankesh", attribute="lives_in", value="New York", sentence="ankesh lives in New York.", previous_value="San Francisco"
)
CANDIDATES = [
    {"id": "fact-sf", "attribute": "lives_in", "value": "San Francisco", "sentence": "ankesh lives in San Francisco."},
    {"id": "fact-football", "attribute": "likes", "value": "football", "sentence": "ankesh likes football."},
]


def test_a_new_city_is_decided_as_an_update_of_the_old_one(remote):
    provider, server, extractor = remote
    decision = extractor.decide(fact=NEW_YORK, candidates=CANDIDATES)
    assert isinstance(decision, ReconcileDecision)
    assert (decision.action, decision.target_fact_id) == ("UPDATE", "fact-sf")
    (body,) = server.chats(CHAT_PATH[provider])
    assert "id=fact-sf" in body["messages"][1]["content"] and "previous_value='San Francisco'" in body["messages"][1]["content"]
    assert "UPDATE" in body["messages"][0]["content"]


def test_a_promotion_is_decided_as_an_update_of_the_old_role_whatever_the_ids(remote):
    _, _, extractor = remote
    fact = ExtractedFact(subject="ankesh", attribute="role", value="senior engineer", sentence="ankesh is a senior engineer.")
    old_role, other = str(uuid.uuid4()), str(uuid.uuid4())
    candidates = [
        {"id": other, "attribute": "works_at", "value": "Google", "sentence": "ankesh works at Google."},
        {"id": old_role, "attribute": "role", "value": "software engineer", "sentence": "ankesh is a software engineer."},
    ]
    decision = extractor.decide(fact=fact, candidates=candidates)
    assert (decision.action, decision.target_fact_id) == ("UPDATE", old_role)


def test_a_known_fact_is_a_noop(remote):
    _, _, extractor = remote
    fact = ExtractedFact(subject="ankesh", attribute="works_at", value="Google", sentence="ankesh works at Google.")
    decision = extractor.decide(fact=fact, candidates=[{"id": "fact-google", "attribute": "works_at", "value": "Google", "sentence": "ankesh works at Google."}])
    assert (decision.action, decision.target_fact_id) == ("NOOP", "fact-google")


def test_a_decision_naming_an_id_that_was_not_offered_is_retried(remote):
    provider, server, extractor = remote
    fact = ExtractedFact(subject="ankesh", attribute="likes", value="football", sentence="ankesh likes football.")
    decision = extractor.decide(fact=fact, candidates=[{"id": "fact-soccer", "attribute": "likes", "value": "soccer", "sentence": "ankesh likes soccer."}])
    assert (decision.action, decision.target_fact_id) == ("NOOP", "fact-soccer")
    attempts = server.chats(CHAT_PATH[provider])
    assert len(attempts) == 2 and "target_fact_id must be one of ['fact-soccer']" in attempts[1]["messages"][-1]["content"]


def test_without_candidates_there_is_nothing_to_ask(remote):
    provider, server, extractor = remote
    assert extractor.decide(fact=NEW_YORK, candidates=[]).action == "ADD"
    negated = NEW_YORK.model_copy(update={"negated": True})
    assert extractor.decide(fact=negated, candidates=[]).action == "NOOP"
    assert server.chats(CHAT_PATH[provider]) == []


def test_offline_the_rules_extract_and_the_attribute_rules_decide(settings):
    settings.LLM_PROVIDER = "offline"
    extractor = extractor_get()
    assert isinstance(extractor, OfflineExtractor) and extractor.name == "offline" and extractor.is_offline
    extraction = extractor.extract(text="I moved from San Francisco to New York", speaker="ankesh", occurred_at=SAID_AT)
    assert key(extraction.facts) == {("ankesh", "lives_in", "New York", "New York", "place", "San Francisco", False)}
    assert extractor.decide(fact=NEW_YORK, candidates=CANDIDATES) is None


def test_a_model_writing_i_for_the_speaker_is_corrected(replay_server, settings):  # noqa: F811
    reply = {
        "entities": [{"name": "I", "kind": "person", "role": "actor"}, {"name": "ankesh", "kind": "person", "role": "actor"}],
        "facts": [{"subject": "I", "attribute": "Lives In", "value": "Oslo", "object_entity": "Oslo", "object_kind": "city",
                   "sentence": "ankesh lives in Oslo.", "valid_from": "", "previous_value": None, "importance": None}],
        "importance": None,
    }  # fmt: skip
    server = replay_server(ollama=[{"match": "I live in Oslo", "responses": [{"content": reply}]}])
    server.configure(settings, "ollama")
    extraction = extractor_get().extract(text="I live in Oslo", speaker="ankesh", occurred_at=SAID_AT)
    assert key(extraction.facts) == {("ankesh", "lives_in", "Oslo", "Oslo", "place", None, False)}
    assert [(e.name, e.kind, e.role) for e in extraction.entities] == [("ankesh", "person", "actor"), ("Oslo", "place", "location")]
    assert extraction.importance == 0.5  # null means the default, not a retry
    assert len(server.chats("/api/chat")) == 1
