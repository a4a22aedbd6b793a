"""The ASGI app: Django, with the MCP server (streamable HTTP) at /mcp beside it.

Requests for /mcp go through `McpAuth` (Host/Origin and bearer token checks) to the MCP SDK's
app; everything else goes to Django. The ASGI lifespan goes to the MCP app, whose session
manager must run for as long as the server does (Django has no lifespan of its own), so the
server must run the lifespan protocol (`memoryweb serve` runs uvicorn with `lifespan="on"`).
Each server process limits PyTorch to one thread (`memoryweb.warmup.native_threads_limit`).
The lifespan also starts, without a broker, the process's background runner
(`retrieval/background.py`), so writes are answered once their raw rows are committed.

Django is served through its WSGI handler on a pool of `MEMORYWEB_HTTP_THREADS` threads
(a2wsgi's bridge, sending a whole response in one hand-off: memoryweb/wsgi_bridge.py), not
through its ASGI handler: no view of ours is async, and the ASGI handler runs each request in a
`ThreadSensitiveContext`, which starts a thread for that request and hops between it and the
event loop several times (request_started, the middleware chain and view, close and
request_finished). Here the whole request runs on a pool thread that stays, which waits for the
loop only to read the body and to send the response (once, unless it streams). A request beyond
the pool's size waits for a thread. A body sent without Content-Length is read
first (memoryweb/chunked.py), since Django's WSGI request would read none of it. Measured in
docs/ARCHITECTURE.md ("Measuring the doors").
"""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from memoryweb.chunked import with_length
from memoryweb.wsgi_bridge import DjangoBridge
from memoryweb.warmup import native_threads_limit, warm_up_in_background

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
native_threads_limit()  # before anything loads PyTorch (warmup.py says why)
wsgi_app = DjangoBridge(get_wsgi_application(), workers=settings.MEMORYWEB_HTTP_THREADS)
django_app = with_length(wsgi_app)  # a chunked body would reach Django's WSGI request empty

from memoryweb.mcp import McpAuth, http_app  # noqa: E402 (needs the settings above)

mcp_app = McpAuth(http_app)


from retrieval.background import background_start  # noqa: E402 (needs the settings above)


async def application(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        background_start()  # without a broker, this process's extraction and indexing threads
        await http_app(scope, receive, send)
    elif scope["type"] == "http" and (scope["path"] == "/mcp" or scope["path"].startswith("/mcp/")):
        await mcp_app(scope, receive, send)
    else:
        await django_app(scope, receive, send)


warm_up_in_background()
