"""Replay recorded language-model answers over real HTTP, so the real `ollama` and `openai`
client libraries are exercised end to end without a model.

A `ReplayServer` listens on 127.0.0.1 (an ephemeral port, in a thread) and answers:

- `GET  /api/version`          → {"version": "…"} (how `auto` finds Ollama; `answer_version=False` hides it)
- `POST /api/chat`             → Ollama chat replies, from the "ollama" recordings
- `POST /v1/chat/completions`  → OpenAI chat completions, from the "openai" recordings

Recordings (tests/providers/recordings/ollama.json and openai.json) are lists of entries:

    {"match": "I love playing football",      # substring of the conversation's FIRST user message
     "responses": [                            # one per attempt: the Nth reply answers attempt N
        {"content": {...}}                     # a JSON value, sent as the reply's text
        {"content": "not json"}                # or the reply's raw text, garbage included
        {"delay": 5, "content": {...}}         # answer after `delay` seconds (timeouts)
        {"status": 500, "error": "boom"}       # an HTTP error
     ]}

Reconciliation prompts list candidate facts with ids the test cannot know in advance (UUIDs), so
inside a JSON `content`, {"$candidate_with_value": "San Francisco"} is replaced by the id of the
candidate line `- id=… value='San Francisco'` in the request (None if there is none).

The attempt is the number of assistant messages already in the conversation (a retry resends
the conversation with the bad reply and the correction), so the server keeps no state and
attempts beyond the list get the last response. An entry with `"by_request": true` counts
requests instead: the Nth request it matches gets the Nth response, whatever the conversation
(a task retried later sends a fresh conversation: "503 now, an answer on the next try"). The first entry whose `match` occurs wins. A
request nothing matches gets HTTP 500 naming the message, so a missing recording is obvious.
Every request is kept in `server.requests` ({"path", "body"}) for assertions.

Use from any test folder (pytest_plugins only works in the root conftest, so import it):

    # tests/memories/conftest.py
    from tests.replay import replay_server  # noqa: F401  (a fixture)

    def test_scenario_through_ollama(replay_server, settings):
        server = replay_server()               # the recordings in tests/providers/recordings/
        server.configure(settings, "ollama")   # LLM_PROVIDER, OLLAMA_URL, OLLAMA_MODEL
        ...                                     # get_llm() now talks to the replay server
"""

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

RECORDINGS = Path(__file__).parent / "providers" / "recordings"
OLLAMA_MODEL = "llama3.1:8b"
OPENAI_MODEL = "gpt-4o-mini"


def load_recordings(name: str) -> list[dict]:
    return json.loads((RECORDINGS / f"{name}.json").read_text())["entries"]


class ReplayServer:
    def __init__(self, *, ollama: list[dict] | None = None, openai: list[dict] | None = None, answer_version: bool = True):
        self.recordings = {"ollama": ollama or [], "openai": openai or []}
        self.answer_version = answer_version
        self.requests: list[dict] = []
        self._matched: dict[int, int] = {}  # id(entry) → requests matched, for "by_request" entries
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a handler still sleeping in a "slow" reply must not hold up teardown
        # A short poll interval: shutdown() waits up to one interval, and every test closes a server.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="llm-replay", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    def configure(self, settings, provider: str, **overrides) -> None:
        """Point pytest-django's `settings` at this server for `provider` (ollama | openai | auto)."""
        settings.LLM_PROVIDER = provider
        settings.OLLAMA_URL = self.url
        settings.OLLAMA_MODEL = OLLAMA_MODEL
        settings.OPENAI_BASE_URL = self.openai_base_url
        settings.OPENAI_API_KEY = "sk-replay"
        settings.OPENAI_MODEL = OPENAI_MODEL
        for name, value in overrides.items():
            setattr(settings, name, value)

    def chats(self, path: str) -> list[dict]:
        return [r["body"] for r in self.requests if r["path"] == path]

    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- answering ------------------------------------------------------------------------

    def _find(self, provider: str, body: dict) -> tuple[dict | None, str]:
        messages = body.get("messages") or []
        users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        first_user = users[0] if users else ""
        attempt = sum(1 for m in messages if m.get("role") == "assistant")
        for entry in self.recordings[provider]:
            if entry["match"] in first_user:
                responses = entry["responses"]
                if entry.get("by_request"):
                    with self._lock:
                        attempt = self._matched.get(id(entry), 0)
                        self._matched[id(entry)] = attempt + 1
                return responses[min(attempt, len(responses) - 1)], first_user
        return None, first_user

    def _wait(self, seconds: float) -> None:
        self._stop.wait(seconds)


_CANDIDATE_LINE = re.compile(r"^- id=(?P<id>\S+) attribute=.*? value=(?P<value>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")", re.M)


def _content_text(response: dict, prompt: str) -> str:
    content = response.get("content", "")
    if isinstance(content, str):
        return content
    ids = {}
    for line in _CANDIDATE_LINE.finditer(prompt):
        ids.setdefault(line["value"][1:-1], line["id"])

    def fill(node):
        if isinstance(node, dict):
            if set(node) == {"$candidate_with_value"}:
                return ids.get(node["$candidate_with_value"])
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        return node

    return json.dumps(fill(content))


def _ollama_reply(model: str, text: str) -> dict:
    return {
        "model": model,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime()),
        "message": {"role": "assistant", "content": text},
        "done": True,
        "done_reason": "stop",
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": 100,
        "prompt_eval_duration": 100_000,
        "eval_count": 50,
        "eval_duration": 500_000,
    }


def _openai_reply(model: str, text: str) -> dict:
    return {
        "id": "chatcmpl-replay",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text, "refusal": None}, "logprobs": None, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
        "system_fingerprint": "fp_replay",
    }


def _handler_for(server: ReplayServer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # quiet: pytest shows failures, not access logs
            pass

        def _send(self, status: int, payload: dict) -> None:
            body = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def do_GET(self):
            if self.path == "/api/version" and server.answer_version:
                return self._send(200, {"version": "0.6.3"})
            if self.path == "/api/tags" and server.answer_version:
                return self._send(200, {"models": [{"name": OLLAMA_MODEL, "model": OLLAMA_MODEL}]})
            self._send(404, {"error": f"not found: {self.path}"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                return self._send(400, {"error": "request body is not JSON"})
            server.requests.append({"path": self.path, "body": body})
            if self.path == "/api/chat":
                provider = "ollama"
            elif self.path == "/v1/chat/completions":
                provider = "openai"
            else:
                return self._send(404, {"error": f"not found: {self.path}"})
            response, first_user = server._find(provider, body)
            if response is None:
                message = f"no {provider} recording matches the first user message: {first_user[:200]!r}"
                return self._send(500, {"error": message} if provider == "ollama" else {"error": {"message": message, "type": "replay"}})
            if response.get("delay"):
                server._wait(float(response["delay"]))
            if response.get("status"):
                error = response.get("error", "error")
                return self._send(response["status"], {"error": error} if provider == "ollama" else {"error": {"message": error, "type": "replay"}})
            model = body.get("model") or (OLLAMA_MODEL if provider == "ollama" else OPENAI_MODEL)
            text = _content_text(response, first_user)
            self._send(200, _ollama_reply(model, text) if provider == "ollama" else _openai_reply(model, text))

    return Handler


@pytest.fixture
def replay_server():
    """A factory: `replay_server()` starts a server with the stored recordings; pass
    `ollama=[…]` / `openai=[…]` entries to replay others, `answer_version=False` to hide
    /api/version. Servers stop when the test ends."""
    servers: list[ReplayServer] = []

    def start(*, ollama: list[dict] | None = None, openai: list[dict] | None = None, answer_version: bool = True) -> ReplayServer:
        server = ReplayServer(
            ollama=load_recordings("ollama") if ollama is None else ollama,
            openai=load_recordings("openai") if openai is None else openai,
            answer_version=answer_version,
        )
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()
