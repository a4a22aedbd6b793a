"""Django's WSGI handler under the ASGI server: a2wsgi's bridge, with a whole response in one hand-off.

a2wsgi runs the WSGI app on a pool thread, which hands every ASGI message to the event loop and
waits for it to be queued: the response's start, each piece of its body, and the empty piece
that ends it, three round trips between the threads for an ordinary response (each a wake-up of
the loop, the GIL passed and taken back). Django's responses other than the streaming ones
(`FileResponse`, `StreamingHttpResponse`) hold their whole body, so here the start and the body
go to the loop as one batch, in one hand-off. A streaming response is sent as a2wsgi sends it,
a piece at a time with its back-pressure (the loop takes at most `send_queue_size` pieces ahead).
"""

import asyncio

from a2wsgi import WSGIMiddleware
from a2wsgi.wsgi import WSGIResponder


class _Responder(WSGIResponder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._start: dict | None = None  # the response's start, held until its body is known

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
