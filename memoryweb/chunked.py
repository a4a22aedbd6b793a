"""A request body sent without Content-Length (chunked), read whole before Django's WSGI handler sees it.

Django's WSGI request reads CONTENT_LENGTH bytes of the body, and none when the header is absent,
so under the WSGI handler (memoryweb/asgi.py) a chunked body would arrive empty. `with_length`
reads such a body on the event loop into a temporary file, as Django's ASGI handler reads every
body, and hands the app a scope that states its length, so the body limit (413) and multipart
uploads work as for any other request. Requests with a Content-Length pass through untouched."""

import tempfile

from django.conf import settings

CHUNK = 2**16


def with_length(app):
    async def measured(scope, receive, send) -> None:
        headers = scope["headers"]
        if scope["type"] != "http" or any(name == b"content-length" for name, _ in headers) \
                or not any(name == b"transfer-encoding" for name, _ in headers):
            await app(scope, receive, send)
            return
        with tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE) as body:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return  # the client left before it finished sending: nobody to answer
                body.write(message.get("body", b""))
                if not message.get("more_body", False):
                    break
            length = body.tell()
            body.seek(0)

            async def replay():
                chunk = body.read(CHUNK)
                return {"type": "http.request", "body": chunk, "more_body": body.tell() < length}

            scope = {**scope, "headers": [*headers, (b"content-length", str(length).encode())]}
            await app(scope, replay, send)

    return measured
