"""The server app (memoryweb/asgi.py) runs Django through its WSGI handler on a pool of
MEMORYWEB_HTTP_THREADS threads that stay, not through its ASGI handler's thread per request."""

import asyncio
import sys
import threading
from collections.abc import AsyncIterator

import httpx
import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_started

from accounts.tokens import token_issue
from memoryweb import warmup
from memories.models import Episode


@pytest.fixture
def server_app(monkeypatch, settings):
    """memoryweb.asgi imported afresh with a pool of two threads (its size is read at import)."""
    settings.MEMORYWEB_HTTP_THREADS = 2
    monkeypatch.setattr(warmup, "warm_up_in_background", lambda: None)
    monkeypatch.delitem(sys.modules, "memoryweb.asgi", raising=False)
    import memoryweb.asgi

    yield memoryweb.asgi.application
    memoryweb.asgi.wsgi_app.executor.shutdown(wait=True)


def _get_all(app, paths: list[str]) -> list[httpx.Response]:
    async def run():
        async with _client(app) as client:
            return await asyncio.gather(*(client.get(path) for path in paths))

    return asyncio.run(run())


def _post(app, path: str, *, secret: str, content: bytes | AsyncIterator[bytes]) -> httpx.Response:
    async def run():
        async with _client(app) as client:
            return await client.post(path, content=content, headers={
                "Authorization": f"Bearer {secret}", "Content-Type": "application/json"})

    return asyncio.run(run())


def _client(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


def test_django_requests_run_on_the_pool_threads_through_the_wsgi_handler(server_app):
    seen = []

    def started(sender, **kwargs):
        seen.append((sender, threading.current_thread().name))

    request_started.connect(started)
    try:
        responses = _get_all(server_app, ["/static/vendor/htmx-2.0.11.min.js"] * 8)
    finally:
        request_started.disconnect(started)
    assert [r.status_code for r in responses] == [200] * 8
    assert all(r.content.startswith(b"var htmx") for r in responses)  # streamed whole through the pool
    assert len(seen) == 8
    assert {sender for sender, _ in seen} == {WSGIHandler}
    # Eight requests at once, on at most the two threads of the pool (a2wsgi names them WSGI_n):
    # the ASGI handler would have started a thread for each.
    assert {name for _, name in seen} <= {"WSGI_0", "WSGI_1"}


@pytest.mark.django_db(transaction=True)  # the refused API call is logged, from a pool thread
def test_login_redirects_and_the_api_errors_come_through(server_app):
    page, api = _get_all(server_app, ["/", "/api/v1/scopes"])
    assert page.status_code == 302 and page.headers["location"] == "/login/?next=/"
    assert api.status_code == 401 and api.json()["code"] == "unauthorized"


@pytest.mark.django_db(transaction=True)  # the pool threads use connections of their own
def test_a_body_is_read_on_the_pool_thread_and_one_over_the_limit_is_answered_413(server_app, cast, settings):
    secret = token_issue(actor=cast.p_owner, user=cast.owner, name="rw", scopes=[cast.scope_a], can_write=True).secret
    body = b'{"text": "I moved from San Francisco to New York", "speaker": "ada"}'
    assert _post(server_app, "/api/v1/scopes/alpha/remember", secret=secret, content=body).status_code == 202
    assert Episode.objects.count() == 1
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    response = _post(server_app, "/api/v1/scopes/alpha/remember", secret=secret, content=b'{"text": "' + b"x" * 10_000 + b'"}')
    assert response.status_code == 413 and response.json()["code"] == "too_large"
    assert Episode.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_chunked_body_is_read_whole_and_one_over_the_limit_is_answered_413(server_app, cast, settings):
    secret = token_issue(actor=cast.p_owner, user=cast.owner, name="rw", scopes=[cast.scope_a], can_write=True).secret

    def chunked(*parts: bytes):  # no Content-Length: httpx sends Transfer-Encoding: chunked
        async def body():
            for part in parts:
                yield part
        return body()

    response = _post(server_app, "/api/v1/scopes/alpha/remember", secret=secret,
                     content=chunked(b'{"text": "I moved from San Francisco ', b'to New York", "speaker": "ada"}'))
    assert response.status_code == 202, response.text
    assert Episode.objects.get().text == "I moved from San Francisco to New York"
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    response = _post(server_app, "/api/v1/scopes/alpha/remember", secret=secret,
                     content=chunked(b'{"text": "', *[b"x" * 1000] * 10, b'"}'))
    assert response.status_code == 413 and response.json()["code"] == "too_large"
    assert Episode.objects.count() == 1
