"""Which language model is in force: LLM_PROVIDER, `auto`, and the per-process cache."""

import socket

from pydantic import BaseModel

from memoryweb.checks import check_llm
from memoryweb.providers.llm import OfflineLLM, OllamaLLM, OpenAILLM, get_llm, resolved_provider


class Extraction(BaseModel):  # the part of the recorded extraction replies this test reads
    facts: list[dict]


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_auto_falls_back_to_offline_when_ollama_is_unreachable(settings):
    settings.LLM_PROVIDER = "auto"
    settings.OLLAMA_URL = closed_port_url()
    assert resolved_provider() == "offline"
    llm = get_llm()
    assert isinstance(llm, OfflineLLM) and llm.is_offline
    check = check_llm()
    assert check.ok and "offline" in check.summary and settings.OLLAMA_URL in check.summary


def test_auto_chooses_ollama_when_it_answers(replay_server, settings):
    server = replay_server()
    server.configure(settings, "auto")
    llm = get_llm()
    assert isinstance(llm, OllamaLLM) and llm.name == "ollama:llama3.1:8b" and not llm.is_offline
    assert check_llm().summary == f"auto: ollama at {server.url}, model llama3.1:8b"
    assert llm.complete_json(system="Reply as JSON.", user="I moved from San Francisco to New York", schema=Extraction).facts
    assert server.chats("/api/chat")  # it really went to the server


def test_auto_stays_offline_when_the_server_is_not_ollama(replay_server, settings):
    server = replay_server(answer_version=False)  # a web server that is not Ollama: /api/version is a 404
    server.configure(settings, "auto")
    assert isinstance(get_llm(), OfflineLLM)


def test_explicit_providers(replay_server, settings):
    server = replay_server()
    server.configure(settings, "ollama")
    assert isinstance(get_llm(), OllamaLLM)
    server.configure(settings, "openai")
    assert isinstance(get_llm(), OpenAILLM) and get_llm().name == "openai:gpt-4o-mini"
    settings.LLM_PROVIDER = "offline"
    assert isinstance(get_llm(), OfflineLLM)


def test_the_client_is_built_once_and_rebuilt_when_settings_change(replay_server, settings):
    server = replay_server()
    server.configure(settings, "ollama")
    first = get_llm()
    assert get_llm() is first
    settings.OLLAMA_MODEL = "qwen2.5:7b"
    second = get_llm()
    assert second is not first and second.name == "ollama:qwen2.5:7b"
    settings.LLM_TIMEOUT = 5.0
    assert get_llm() is not second and get_llm().timeout == 5.0
