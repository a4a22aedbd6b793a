"""The Ollama and OpenAI clients, through the real client libraries against the replay server:
one generic call, `complete_json`, and how server failures are reported."""

import socket
import time

import pytest
from pydantic import BaseModel

from memoryweb.providers.llm import LLMError, OfflineLLM, get_llm

CHAT_PATH = {"ollama": "/api/chat", "openai": "/v1/chat/completions"}
PROVIDERS = ["ollama", "openai"]


class Answer(BaseModel):
    answer: str
    citations: list[str]


@pytest.fixture(params=PROVIDERS)
def remote(request, replay_server, settings):
    """(provider, server, client) for each remote provider, pointed at the recordings."""
    server = replay_server()
    server.configure(settings, request.param)
    return request.param, server, get_llm()


def test_each_remote_provider_is_named_for_its_model(remote):
    provider, _, llm = remote
    assert llm.name == {"ollama": "ollama:llama3.1:8b", "openai": "openai:gpt-4o-mini"}[provider]
    assert llm.is_offline is False


def test_a_slow_model_times_out_with_a_readable_reason(remote, settings):
    settings.LLM_TIMEOUT = 0.5
    started = time.monotonic()
    with pytest.raises(LLMError) as failure:
        get_llm().complete_json(system="Reply as JSON.", user="I moved to Lisbon", schema=Answer)
    assert time.monotonic() - started < 3  # the recording answers after 5 s
    assert "timed out after 0.5 s" in str(failure.value)
    assert failure.value.retryable is True


def test_a_server_error_is_a_retryable_llm_error(remote):
    provider, server, llm = remote
    with pytest.raises(LLMError) as failure:
        llm.complete_json(system="Reply as JSON.", user="I work at Initech", schema=Answer)
    assert "HTTP 500" in str(failure.value) and "model runner crashed" in str(failure.value)
    assert failure.value.retryable is True
    assert len(server.chats(CHAT_PATH[provider])) == 1  # transport failures are not retried inside


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_unreachable_server_is_a_retryable_llm_error(provider, settings):
    url = f"http://127.0.0.1:{closed_port()}"
    settings.LLM_PROVIDER = provider
    settings.OLLAMA_URL, settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = url, f"{url}/v1", "sk-test"
    with pytest.raises(LLMError) as failure:
        get_llm().complete_json(system="Reply as JSON.", user="I live in Oslo", schema=Answer)
    assert "unreachable" in str(failure.value) and failure.value.retryable is True


def test_openai_without_a_key_or_a_base_url_is_a_configuration_error(settings):
    settings.LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL = "", ""
    with pytest.raises(LLMError, match="needs OPENAI_API_KEY"):
        get_llm()


# --- the generic JSON completion (answer synthesis uses it) ---------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_complete_json_returns_any_schema(provider, replay_server, settings):
    entries = [{"match": "Question: where does ankesh live?", "responses": [{"content": {"answer": "New York", "citations": ["fact-ny"]}}]}]
    server = replay_server(ollama=entries, openai=entries)
    server.configure(settings, provider)
    result = get_llm().complete_json(system="Answer only from the evidence, as JSON.", user="Question: where does ankesh live?\nEvidence: …", schema=Answer)
    assert result == Answer(answer="New York", citations=["fact-ny"])
    (body,) = server.chats(CHAT_PATH[provider])
    assert body["messages"][0] == {"role": "system", "content": "Answer only from the evidence, as JSON."}


def test_the_offline_client_has_no_model(settings):
    settings.LLM_PROVIDER = "offline"
    llm = get_llm()
    assert isinstance(llm, OfflineLLM) and llm.name == "offline" and llm.is_offline
    with pytest.raises(NotImplementedError):
        llm.complete_json(system="s", user="u", schema=Answer)


def test_remote_embedders_report_transient_and_permanent_failures(replay_server, settings):
    from memoryweb.providers.embedders import EmbedderError, OllamaEmbedder, OpenAIEmbedder

    settings.OLLAMA_URL = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(EmbedderError) as unreachable:
        OllamaEmbedder()  # it probes its dimension on construction
    assert unreachable.value.retryable is True and "is unreachable" in str(unreachable.value)

    server = replay_server()  # it serves chats only: an embedding request is a 404, a permanent refusal
    server.configure(settings, "ollama")
    for build in (OllamaEmbedder, OpenAIEmbedder):
        with pytest.raises(EmbedderError) as refused:
            build()
        assert refused.value.retryable is False and "answered HTTP 404" in str(refused.value)
