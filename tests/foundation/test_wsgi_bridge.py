"""The WSGI bridge (memoryweb/wsgi_bridge.py): a whole response reaches the ASGI server as its
start and its body in one hand-off; a streaming one piece by piece, as a2wsgi sends it."""

import asyncio

import pytest

from memoryweb.wsgi_bridge import DjangoBridge


class Whole(list):
    streaming = False  # as Django's HttpResponse


class Streaming(list):
    streaming = True  # as FileResponse and StreamingHttpResponse

    def close(self):
        self.closed = True


def app_of(body, *, fail=False):
    def app(environ, start_response):
        if fail:
            raise RuntimeError("the app failed")
        start_response("201 Created", [("Content-Type", "text/plain"), ("X-Seen", environ["PATH_INFO"])])
        return body
    return app


def serve(app, *, method="GET", body=b"", sent: list | None = None) -> tuple[list[dict], list]:
    """The ASGI messages the bridge sends for one request (into `sent` if given, so a caller sees
    them when the request raises), and what it queued to the loop."""
    bridge = DjangoBridge(app, workers=2)
    sent, puts = ([] if sent is None else sent), []

    async def run():
        received = False

        async def receive():
            nonlocal received
            if not received:
                received = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": method, "path": "/here", "raw_path": b"/here", "root_path": "", "query_string": b"",
                 "headers": [(b"host", b"testserver")], "server": ("testserver", 80), "client": ("127.0.0.1", 1234),
                 "scheme": "http", "http_version": "1.1", "asgi": {"version": "3.0"}}
        original = asyncio.Queue.put

        async def counted(queue, item):
            puts.append(item)
            return await original(queue, item)

        asyncio.Queue.put = counted
        try:
            await bridge(scope, receive, send)
        finally:
            asyncio.Queue.put = original

    try:
        asyncio.run(run())
    finally:
        bridge.executor.shutdown(wait=True)
    return sent, puts


def test_a_whole_response_is_its_start_and_body_in_one_hand_off():
    sent, puts = serve(app_of(Whole([b"hello ", b"world"])))
    assert sent == [
        {"type": "http.response.start", "status": 201, "headers": [(b"content-type", b"text/plain"), (b"x-seen", b"/here")]},
        {"type": "http.response.body", "body": b"hello world"},
    ]
    assert len([p for p in puts if p is not None]) == 1  # start and body together (a2wsgi queued three)


def test_a_streaming_response_goes_piece_by_piece_and_is_closed():
    body = Streaming([b"a", b"b", b"c"])
    sent, puts = serve(app_of(body))
    assert [m["type"] for m in sent] == ["http.response.start"] + ["http.response.body"] * 4
    assert [m.get("body") for m in sent[1:]] == [b"a", b"b", b"c", b""]
    assert [m.get("more_body", False) for m in sent[1:]] == [True, True, True, False]
    assert body.closed


def test_an_empty_whole_response_still_starts_and_ends():
    sent, _ = serve(app_of(Whole([])))
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"] and sent[1]["body"] == b""


def test_an_app_that_fails_before_answering_raises_and_sends_nothing():
    sent = []
    with pytest.raises(RuntimeError, match="the app failed"):
        serve(app_of(Whole([]), fail=True), sent=sent)
    assert sent == []


def test_a_django_response_comes_through_whole(settings):
    """Django's own handler behind it: a page of ours, status, headers and body."""
    from django.core.wsgi import get_wsgi_application

    sent, puts = serve(get_wsgi_application())
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 404
    assert sent[1]["type"] == "http.response.body" and b"Not Found" in sent[1]["body"] and not sent[1].get("more_body")
    assert len([p for p in puts if p is not None]) == 1
