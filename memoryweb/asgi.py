"""The ASGI app: Django, with the MCP server (streamable HTTP) at /mcp beside it.

Requests for /mcp go through `McpAuth` (Host/Origin and bearer token checks) to the MCP SDK's
app; everything else goes to Django. The ASGI lifespan goes to the MCP app, whose session
manager must run for as long as the server does (Django has no lifespan of its own), so the
server must run the lifespan protocol (`memoryweb serve` runs uvicorn with `lifespan="on"`).
Each server process limits PyTorch to one thread (`memoryweb.warmup.native_threads_limit`).
"""

import os

from django.core.asgi import get_asgi_application

from memoryweb.warmup import native_threads_limit, warm_up_in_background

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
native_threads_limit()  # before anything loads PyTorch (warmup.py says why)
django_app = get_asgi_application()

from memoryweb.mcp import McpAuth, http_app  # noqa: E402 (needs the settings above)

mcp_app = McpAuth(http_app)


async def application(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        await http_app(scope, receive, send)
    elif scope["type"] == "http" and (scope["path"] == "/mcp" or scope["path"].startswith("/mcp/")):
        await mcp_app(scope, receive, send)
    else:
        await django_app(scope, receive, send)


warm_up_in_background()
