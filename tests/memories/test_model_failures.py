"""Remote model failures on a worker, through the real `ollama` and `openai` clients against the
replay server: transient ones (unreachable, timeouts, 5xx, 429) are retried by the task with
backoff; permanent ones (other 4xx, replies that never fit the schema) fail the episode at once
with a readable reason."""

import socket

import pytest
from celery.exceptions import Retry

from memories.models import Episode, EpisodeStatus, Fact
from memories.services.extract import TransientExtractionError
from memories.services.ingest import remember
from memories.tasks import MAX_RETRIES, extract_episode
from tests.replay import replay_server  # noqa: F401  (a fixture)

from .conftest import at

TEXT = "I joined Hooli"
HOOLI = {
    "entities": [{"name": "ankesh", "kind": "person", "role": "actor"}, {"name": "Hooli", "kind": "organization", "role": "object"}],
    "facts": [{"subject": "ankesh", "attribute": "works_at", "value": "Hooli", "object_entity": "Hooli",
               "object_kind": "organization", "sentence": "ankesh works at Hooli.", "confidence": 0.9, "importance": 0.85}],
    "importance": 0.85,
}  # fmt: skip
CHAT_PATH = {"ollama": "/api/chat", "openai": "/v1/chat/completions"}


def answering(*responses) -> list[dict]:
    """Recordings for TEXT: the Nth request (a fresh conversation per task attempt) gets the Nth response."""
    return [{"match": TEXT, "by_request": True, "responses": list(responses)}]


def stored(cast) -> Episode:
    result = remember(scope=cast.scope_a, text=TEXT, speaker="ankesh", occurred_at=at(2024, 1), actor=None, enqueue=False)
    return Episode.objects.get(public_id=result.episodes[0].episode_id)


@pytest.fixture
def worker(monkeypatch):
    """Deliver the extraction task as a worker would: `self.retry` schedules the next delivery
    (retries + 1, with its countdown) until MAX_RETRIES, after which Celery raises the error.
    Returns `deliver(episode, before_each=None) -> (outcomes, countdowns)`."""

    def deliver(episode: Episode, before_each=None):
        outcomes, countdowns = [], []

        def retry(*, exc, countdown):
            if extract_episode.request.retries >= MAX_RETRIES:
                raise exc  # what Task.retry does once max_retries is reached
            countdowns.append(countdown)
            return Retry(exc=exc, when=countdown)

        monkeypatch.setattr(extract_episode, "retry", retry)
        for retries in range(MAX_RETRIES + 1):
            if before_each:
                before_each(retries)
            extract_episode.push_request(id="task-1", is_eager=False, retries=retries)
            try:
                outcomes.append(extract_episode.run(episode.pk))
                break
            except Retry:
                outcomes.append("retry")
            except TransientExtractionError:
                outcomes.append("gave up")
                break
            finally:
                extract_episode.pop_request()
        episode.refresh_from_db()
        return outcomes, countdowns

    return deliver


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_an_openai_connection_error_is_retried_and_the_next_attempt_succeeds(cast, worker, replay_server, settings):  # noqa: F811
    server = replay_server(openai=answering({"content": HOOLI}))
    server.configure(settings, "openai", OPENAI_BASE_URL=f"{closed_port_url()}/v1")  # nothing listens there
    episode = stored(cast)

    def server_back_up(retries):
        if retries == 1:
            settings.OPENAI_BASE_URL = server.openai_base_url

    outcomes, countdowns = worker(episode, before_each=server_back_up)
    assert outcomes == ["retry", "done"] and 5 <= countdowns[0] <= 10  # first backoff: 10 s, jittered
    assert (episode.status, episode.error, episode.attempts) == (EpisodeStatus.DONE, "", 2)
    assert list(Fact.objects.values_list("attribute", "value")) == [("works_at", "Hooli")]


@pytest.mark.parametrize("provider", ["ollama", "openai"])
@pytest.mark.parametrize("status", [503, 429])
def test_a_server_error_or_a_rate_limit_is_retried_and_the_next_attempt_succeeds(provider, status, cast, worker, replay_server, settings):  # noqa: F811
    entries = answering({"status": status, "error": "model is loading"}, {"content": HOOLI})
    server = replay_server(ollama=entries, openai=entries)
    server.configure(settings, provider)
    episode = stored(cast)
    outcomes, _ = worker(episode)
    assert outcomes == ["retry", "done"]
    assert (episode.status, episode.attempts) == (EpisodeStatus.DONE, 2)
    assert len(server.chats(CHAT_PATH[provider])) == 2
    assert Fact.objects.get().value == "Hooli"


def test_an_ollama_503_that_persists_fails_the_episode_visibly_after_the_retries(cast, worker, replay_server, settings):  # noqa: F811
    server = replay_server(ollama=answering({"status": 503, "error": "server overloaded"}))
    server.configure(settings, "ollama")
    episode = stored(cast)
    outcomes, countdowns = worker(episode)
    assert outcomes == ["retry"] * MAX_RETRIES + ["gave up"]
    assert len(countdowns) == MAX_RETRIES and countdowns == sorted(countdowns)  # the backoff grows, jitter and all
    assert episode.status == EpisodeStatus.FAILED and episode.attempts == MAX_RETRIES + 1
    assert episode.error == (
        f"The language model (ollama:llama3.1:8b) failed: ollama:llama3.1:8b: Ollama at {server.url} "
        "answered HTTP 503: server overloaded"
    )
    assert len(server.chats("/api/chat")) == MAX_RETRIES + 1
    assert episode.text == TEXT and not Fact.objects.exists()


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_a_400_fails_the_episode_at_once_without_a_retry(provider, cast, worker, replay_server, settings):  # noqa: F811
    entries = answering({"status": 400, "error": "invalid model name"}, {"content": HOOLI})
    server = replay_server(ollama=entries, openai=entries)
    server.configure(settings, provider)
    episode = stored(cast)
    outcomes, countdowns = worker(episode)
    assert (outcomes, countdowns) == (["failed"], [])
    assert (episode.status, episode.attempts) == (EpisodeStatus.FAILED, 1)
    assert "answered HTTP 400: invalid model name" in episode.error
    assert episode.error.startswith(f"The language model ({'ollama:llama3.1:8b' if provider == 'ollama' else 'openai:gpt-4o-mini'}) failed")
    assert len(server.chats(CHAT_PATH[provider])) == 1


def test_a_reply_that_never_fits_the_schema_fails_the_episode_at_once(cast, worker, replay_server, settings):  # noqa: F811
    server = replay_server(openai=answering({"content": "I'm sorry, I can't help with that."}))
    server.configure(settings, "openai")
    episode = stored(cast)
    outcomes, countdowns = worker(episode)
    assert (outcomes, countdowns) == (["failed"], [])
    assert episode.status == EpisodeStatus.FAILED and "returned invalid JSON 3 times" in episode.error
    assert len(server.chats("/v1/chat/completions")) == settings.LLM_MAX_ATTEMPTS  # re-asked in one attempt, not retried


def test_an_ollama_timeout_is_retried(cast, worker, replay_server, settings):  # noqa: F811
    server = replay_server(ollama=answering({"delay": 5, "content": HOOLI}, {"content": HOOLI}))
    server.configure(settings, "ollama", LLM_TIMEOUT=0.5)
    episode = stored(cast)
    outcomes, _ = worker(episode)
    assert outcomes == ["retry", "done"] and episode.status == EpisodeStatus.DONE


class FlakyEmbedder:
    """The hash embedder behind a remote embedder's failures: `failures` errors first, then vectors."""

    def __init__(self, failures):
        from memoryweb.providers.embedders import HashEmbedder

        self._inner, self.failures = HashEmbedder(), list(failures)
        self.name, self.dim = self._inner.name, self._inner.dim

    def embed(self, texts):
        if self.failures:
            raise self.failures.pop(0)
        return self._inner.embed(texts)


@pytest.mark.parametrize(("retryable", "expected"), [(True, ["retry", "done"]), (False, ["failed"])])
def test_a_remote_embedder_failure_is_retried_only_when_transient(retryable, expected, cast, worker, monkeypatch, settings):
    from memoryweb.providers.embedders import EmbedderError

    settings.LLM_PROVIDER = "offline"
    embedder = FlakyEmbedder([EmbedderError("openai-text-embedding-3-small: answered HTTP 503: busy", retryable=retryable)])
    monkeypatch.setattr("memories.services.extract.get_embedder", lambda: embedder)
    episode = stored(cast)
    outcomes, _ = worker(episode)
    assert outcomes == expected
    if not retryable:
        assert episode.error == "The embedder (hash) failed: openai-text-embedding-3-small: answered HTTP 503: busy"
