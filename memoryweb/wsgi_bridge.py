"""Django's WSGI handler under the ASGI server: a2wsgi's bridge, with a whole response in one hand-off.

a2wsgi runs the WSGI app on a pool thread, which hands every ASGI message to the event loop and
waits for it to be queued: the response's start, each piece of its body, and the empty piece
that ends it, three round trips between the threads for an ordinary response (each a wake-up of
the loop, the GIL passed and taken back). Django's responses other than the streaming ones
(`FileResponse`, `StreamingHttpResponse`) hold their whole body, so here the start and the body
go to the loop as one batch, in one hand-off. A streaming response is sent as a2wsgi sends it,
a piece at a time with its back-pressure (the loop takes at most `send_queue_size` pieces ahead).

The request body likewise: a2wsgi's thread asks the loop for each piece of it as Django reads,
one more round trip between the threads. A body that states its length, at most `PRE_READ_MAX`
bytes (an API call's JSON), is read on the loop before the app's thread starts, so that thread
never waits for the loop to read; a client that leaves before sending it all gets no answer,
as it would not have read one. A larger body, or one of unstated length, is read as before.
"""

import asyncio
import contextvars
import functools

from a2wsgi import WSGIMiddleware
from a2wsgi.wsgi import Body, WSGIResponder, build_environ

PRE_READ_MAX = 2**16  # bytes: the largest request body read on the loop before the app starts


class _ReadBody(Body):
    """A request body read whole already: the app's reads never call back to the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, data: bytes) -> None:
        super().__init__(loop, receive=None)
        self.buffer.extend(data)
        self._has_more = False


async def _body_read(receive, length: int) -> bytes | None:
    """The body's bytes (at most `length`, as a WSGI app reads no further), or None when the
    client left first."""
    data = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        data += message.get("body", b"")
        if not message.get("more_body", False) or len(data) >= length:
            return bytes(data)


def _stated_length(scope) -> int | None:
    """The Content-Length the request states, or None (absent, or not a length): read as before."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                return None
            return length if length >= 0 else None
    return None


class _Responder(WSGIResponder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._start: dict | None = None  # the response's start, held until its body is known

    async def __call__(self, scope, receive, send) -> None:
        length = _stated_length(scope)
        if length is None or length > PRE_READ_MAX:
            return await super().__call__(scope, receive, send)
        data = await _body_read(receive, length) if length else b""
        if data is None:
            return  # the client left: nobody to answer
        # a2wsgi's own __call__ from here, with the body read.
        environ = build_environ(scope, _ReadBody(self.loop, data))
        sender = self.loop.create_task(self.sender(send))
        try:
            run = functools.partial(contextvars.copy_context().run, self.wsgi)
            await self.loop.run_in_executor(self.executor, run, environ, self.start_response)
            await self.send_queue.put(None)
            await sender
            if self.exc_info is not None:
                raise self.exc_info[0].with_traceback(self.exc_info[1], self.exc_info[2])
        finally:
            if not sender.done():
                sender.cancel()

    def send(self, message) -> None:
        if message is not None and message["type"] == "http.response.start":
            self._start = message  # a2wsgi's own start (headers encoded): sent with the body
            return
        self._release()
        super().send(message)

    def _release(self) -> None:
        """The held start on its own: a streaming body follows, piece by piece."""
        if self._start is not None:
            start, self._start = self._start, None
            super().send(start)

    def wsgi(self, environ, start_response) -> None:
        iterable = self.app(environ, start_response)
        try:
            if getattr(iterable, "streaming", True) or self._start is None:
                for chunk in iterable:
                    self.send({"type": "http.response.body", "body": chunk, "more_body": True})
                self.send({"type": "http.response.body", "body": b""})
                return
            body = b"".join(iterable)
            start, self._start = self._start, None
            asyncio.run_coroutine_threadsafe(
                self.send_queue.put((start, {"type": "http.response.body", "body": body})), loop=self.loop
            ).result()
        finally:
            getattr(iterable, "close", lambda: None)()

    async def sender(self, send) -> None:
        while True:
            message = await self.send_queue.get()
            if message is None:
                break
            for each in message if isinstance(message, tuple) else (message,):
                await send(each)
            self.send_queue.task_done()


class DjangoBridge(WSGIMiddleware):
    """`a2wsgi.WSGIMiddleware` with `_Responder` for HTTP (the lifespan and websockets as a2wsgi has them)."""

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            return await _Responder(self.app, self.executor, self.send_queue_size)(scope, receive, send)
        return await super().__call__(scope, receive, send)
