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
    assert sent[1]["type"] == "http.response.body" and b"There is no page at this address." in sent[1]["body"] and not sent[1].get("more_body")
    assert len([p for p in puts if p is not None]) == 1


def echo(environ, start_response):
    """The request's body as read by the app, and how many times its thread called the loop."""
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    start_response("200 OK", [("Content-Type", "application/octet-stream")])
    return Whole([body])


def serve_body(pieces: list[dict], *, length: int | None) -> tuple[list[dict], int, bool]:
    """The messages sent for a POST whose body comes as `pieces` (ASGI receive messages), how many
    times the app's thread handed work to the loop, and whether the app ran at all."""
    bridge = DjangoBridge(lambda environ, start: ran.append(True) or echo(environ, start), workers=2)
    sent, ran, hand_offs = [], [], []

    async def run():
        queue = list(pieces)

        async def receive():
            if queue:
                return queue.pop(0)
            await asyncio.sleep(3600)

        async def send(message):
            sent.append(message)

        headers = [(b"host", b"testserver")] + ([(b"content-length", str(length).encode())] if length is not None else [])
        scope = {"type": "http", "method": "POST", "path": "/here", "raw_path": b"/here", "root_path": "", "query_string": b"",
                 "headers": headers, "server": ("testserver", 80), "client": ("127.0.0.1", 1234), "scheme": "http",
                 "http_version": "1.1", "asgi": {"version": "3.0"}}
        await bridge(scope, receive, send)

    original = asyncio.run_coroutine_threadsafe

    def counted(coroutine, loop):
        hand_offs.append(coroutine)
        return original(coroutine, loop)

    asyncio.run_coroutine_threadsafe = counted
    try:
        asyncio.run(run())
    finally:
        asyncio.run_coroutine_threadsafe = original
        bridge.executor.shutdown(wait=True)
    return sent, len(hand_offs), bool(ran)


def test_a_small_body_is_read_on_the_loop_before_the_app_s_thread_starts():
    pieces = [{"type": "http.request", "body": b'{"query": ', "more_body": True},
              {"type": "http.request", "body": b'"where?"}', "more_body": False}]
    sent, hand_offs, _ = serve_body(pieces, length=19)
    assert sent[1]["body"] == b'{"query": "where?"}'
    assert hand_offs == 1  # the response only: the thread never asked the loop for the body


def test_a_body_beyond_the_pre_read_limit_is_read_by_the_app_piece_by_piece():
    from memoryweb.wsgi_bridge import PRE_READ_MAX

    half = b"x" * (PRE_READ_MAX // 2 + 1)
    pieces = [{"type": "http.request", "body": half, "more_body": True}, {"type": "http.request", "body": half, "more_body": False}]
    sent, hand_offs, _ = serve_body(pieces, length=2 * len(half))
    assert sent[1]["body"] == half + half
    assert hand_offs == 3  # two pieces of the body asked for by the thread, then the response


def test_a_body_of_no_stated_length_and_an_empty_one_reach_the_app():
    sent, _, _ = serve_body([{"type": "http.request", "body": b"", "more_body": False}], length=0)
    assert sent[0]["status"] == 200 and sent[1]["body"] == b""
    sent, _, _ = serve_body([{"type": "http.request", "body": b"ignored", "more_body": False}], length=None)
    assert sent[0]["status"] == 200 and sent[1]["body"] == b""  # as WSGI reads it: no length, no body
    sent, hand_offs, _ = serve_body([{"type": "http.request", "body": b"x", "more_body": False}], length=-1)
    assert sent[0]["status"] == 200 and hand_offs == 2  # not a length: left to the app to read, as before


def test_a_client_that_leaves_before_its_body_arrives_gets_no_answer_and_the_app_never_runs():
    pieces = [{"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"}]
    sent, hand_offs, ran = serve_body(pieces, length=10)
    assert sent == [] and hand_offs == 0 and not ran
