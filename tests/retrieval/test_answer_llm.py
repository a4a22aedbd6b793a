"""`answer` with a language model: it answers from the evidence only and cites it. Recorded
answers are replayed over HTTP to the real client libraries."""

import pytest

from memories.models import Fact
from retrieval.services import answer
from tests.replay import replay_server  # noqa: F401  (a fixture)
from tests.retrieval.conftest import NOW

pytestmark = pytest.mark.django_db


def _answers(reply):
    return [{"match": "Question: Where do I live?", "responses": reply}]


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_the_model_answers_from_the_evidence_and_only_known_ids_are_cited(provider, scenario, replay_server, settings):  # noqa: F811
    new_york = Fact.objects.get(scope=scenario.scope_a, attribute="lives_in", status="active")
    recorded = _answers([{"content": {"answer": "You live in New York.", "citations": [str(new_york.public_id), "made-up-id"]}}])
    server = replay_server(**{provider: recorded})
    server.configure(settings, provider)

    reply = answer(scope=scenario.scope_a, question="Where do I live?", speaker="ankesh", now=NOW)

    assert reply.text == "You live in New York."
    assert reply.provider.startswith(provider)
    assert reply.citations == [str(new_york.public_id)]  # an id the evidence does not hold is dropped
    assert [item.id for item in reply.facts_used] == [str(new_york.public_id)]
    path = "/api/chat" if provider == "ollama" else "/v1/chat/completions"
    prompt = str(server.chats(path)[0])
    assert str(new_york.public_id) in prompt and "New York" in prompt  # the evidence went to the model


def test_a_model_that_keeps_failing_leaves_the_offline_answer(scenario, replay_server, settings):  # noqa: F811
    server = replay_server(ollama=_answers([{"content": "not json at all"}]))
    server.configure(settings, "ollama", LLM_MAX_ATTEMPTS=2)

    reply = answer(scope=scenario.scope_a, question="Where do I live?", speaker="ankesh", now=NOW)

    assert reply.provider == "offline"
    assert reply.text.startswith("You live in New York")
    assert len(server.chats("/api/chat")) == 2  # it was asked, and retried, before falling back
