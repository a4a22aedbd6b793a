"""The client's error mapping and retries, against a tiny local HTTP server that answers from a
script (no memoryweb server, no database): which calls are repeated, how long it waits."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memoryweb import client as client_module
from memoryweb.client import (
    Answer, Episode, Fact, MemoryWebClient, RateLimited, RecallResult, ServerError, Unreachable, format_time, parse_time,
)

EPISODE = {"id": "e1", "status": "done", "error": "", "attempts": 1, "text": "hi", "speaker": "ada",
           "occurred_at": "2025-02-10T00:00:00Z", "ingested_at": "2025-02-10T10:11:12.345Z", "importance": 0.5,
           "source": "api", "session_id": None, "turn_id": None, "searchable": True, "facts": []}


@pytest.fixture
def scripted():
    """A server answering each request with the next (status, headers, body) of `replies`; yields (url, replies, seen)."""
    replies, seen = [], []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            seen.append((self.command, self.path, self.rfile.read(length)))
            status, headers, body = replies.pop(0) if replies else (500, {}, {"message": "script ran out"})
            raw = json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = do_DELETE = _answer

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", replies, seen
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def waits(monkeypatch):
    slept = []
    monkeypatch.setattr(client_module.time, "sleep", slept.append)
    return slept


def test_a_429_is_retried_after_retry_after(scripted, waits):
    url, replies, seen = scripted
    replies += [(429, {"Retry-After": "2"}, {"status": 429, "code": "too_many_requests", "message": "Too many requests; try again in 2 s."}),
                (200, {}, EPISODE)]
    episode = MemoryWebClient(url, "mw_x_y").episode("notes", "e1")
    assert isinstance(episode, Episode) and episode.status == "done"
    assert len(seen) == 2 and waits == [2.0]
    assert seen[0][1] == "/api/v1/scopes/notes/episodes/e1"


def test_retry_after_is_capped_and_the_last_429_is_raised_with_the_servers_message(scripted, waits):
    url, replies, seen = scripted
    refusal = (429, {"Retry-After": "3600"}, {"status": 429, "code": "too_many_requests", "message": "Too many requests; try again in 3600 s."})
    replies += [refusal] * 3
    with pytest.raises(RateLimited) as raised:
        MemoryWebClient(url, "mw_x_y", retries=2).remember("notes", "I moved")  # a 429 is retried even for a write
    assert raised.value.message == "Too many requests; try again in 3600 s." and raised.value.retry_after == 3600
    assert len(seen) == 3 and waits == [client_module.MAX_WAIT_SECONDS] * 2


def test_a_503_is_retried_for_a_read_but_not_for_remember(scripted, waits):
    url, replies, seen = scripted
    unavailable = (503, {}, {"status": 503, "code": "error", "message": "The database does not answer."})
    recall = {"query": "q", "results": [], "window": None, "as_of": None, "include_history": False, "entities": [], "lexemes": []}
    replies += [unavailable, (200, {}, recall)]
    mw = MemoryWebClient(url, "mw_x_y")
    assert mw.recall("notes", "q").query == "q" and len(seen) == 2 and waits == [0.5]
    replies += [unavailable]
    with pytest.raises(ServerError, match="The database does not answer."):
        mw.remember("notes", "I moved")
    assert len(seen) == 3


def test_no_server_is_unreachable_and_nothing_was_sent(waits):
    with pytest.raises(Unreachable) as raised:
        MemoryWebClient("http://127.0.0.1:9", "mw_x_y", retries=1).scopes()
    assert raised.value.sent is False and len(waits) == 1


def test_results_read_the_apis_json_and_write_it_back_the_same():
    item = {"kind": "fact", "id": "f1", "text": "ada lives in Oslo", "score": 0.9, "lanes": {"similarity": 0.9},
            "status": "active", "valid_from": "2025-02-10T00:00:00Z", "valid_to": None, "occurred_at": None, "speaker": "",
            "source": {"episode": "e1", "session": None, "turn": None}, "why": ["names ada"],
            "subject": "ada", "attribute": "lives_in", "value": "Oslo"}
    turn = {**item, "kind": "turn", "subject": None, "attribute": None, "value": None}
    recall = {"query": "q", "results": [item, turn], "window": {"start": "2025-01-01T00:00:00Z", "end": None, "phrase": "in 2025"},
              "as_of": None, "include_history": False, "entities": ["ada"], "lexemes": ["oslo"]}
    result = RecallResult.from_dict(recall)
    assert result.items[0].valid_from.year == 2025 and result.window.phrase == "in 2025"
    expected = {**recall, "results": [item, {k: v for k, v in turn.items() if k not in ("subject", "attribute", "value")}]}
    assert result.as_dict() == expected
    reply = Answer.from_dict({"question": "q", "answer": "Oslo", "citations": ["f1"], "facts_used": ["f1"], "provider": "offline",
                              "window": None, "evidence": [item]})
    assert reply.text == "Oslo" and reply.as_dict()["answer"] == "Oslo"
    assert Episode.from_dict(EPISODE).as_dict() == EPISODE
    assert Fact.from_dict({"id": "f", "subject": "ada", "valid_from": None}).value == ""


def test_times_are_written_as_the_api_writes_them():
    assert format_time(parse_time("2025-02-10T10:11:12.345678+00:00")) == "2025-02-10T10:11:12.345Z"
    assert format_time(parse_time("2025-02-10T12:00:00+02:00")) == "2025-02-10T10:00:00Z"
