"""Middleware of our own."""

from django.http import HttpRequest, HttpResponse


class SyncChain:
    """Last in MIDDLEWARE, and synchronous only, so that under ASGI Django runs the whole chain
    on the request's one thread.

    Django adapts each middleware to the mode of the one inside it. The chain ending in this one
    is synchronous throughout: Django hops once from the event loop to the request's thread and
    back for the view. Without it, Django's own middleware (MiddlewareMixin) runs in async mode,
    which sends every `process_request` and `process_response` through `sync_to_async`, a hop
    to that thread and back each: about ten per request, measured at ~1 ms of a worker's CPU
    and ~30 context switches per API request (docs/ARCHITECTURE.md, "Measuring the doors").
    No view of ours is async (MCP is served beside Django, not through it), so nothing waits
    on the event loop that the thread would block."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)
