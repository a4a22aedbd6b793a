"""The caller log through the API: every call (refusals too) with its status and latency, and a
scope's log for the admins of its team."""

from datetime import timedelta

from django.db import connection
from django.utils import timezone

from accounts.models import ApiCall
from tests.api.conftest import Api


def test_every_api_call_is_logged_with_caller_status_and_latency(cast, tokens, api):
    api.post("/scopes/alpha/remember", {"text": "I moved to Oslo"})
    api.post("/scopes/alpha/recall", {"query": "Oslo"})
    api.get("/scopes/nowhere/entities")
    api.post("/scopes/alpha/remember", {"text": ""})
    Api().get("/scopes/alpha/entities")
    Api("mw_nope").post("/scopes/alpha/recall", {"query": "Oslo"})
    api.get("/scopes")
    calls = list(ApiCall.objects.order_by("id"))
    assert [(c.operation, c.status) for c in calls] == [
        ("POST /scopes/{slug}/remember", 202),
        ("POST /scopes/{slug}/recall", 200),
        ("GET /scopes/{slug}/entities", 404),
        ("POST /scopes/{slug}/remember", 422),
        ("GET /scopes/{slug}/entities", 401),
        ("POST /scopes/{slug}/recall", 401),
        ("GET /scopes", 200),
    ]
    prefix = tokens["rw"].split("_")[1]
    assert [(c.user_id, c.token_prefix) for c in calls[:4]] == [(cast.owner.pk, prefix)] * 4
    assert [(c.user_id, c.token_prefix) for c in calls[4:6]] == [(None, "")] * 2  # unauthenticated
    assert all(c.door == "api" and c.latency_ms > 0 for c in calls)
    assert [(c.scope_id, c.scope_slug) for c in calls[1:3]] == [(cast.scope_a.pk, "alpha"), (None, "nowhere")]
    assert calls[-1].scope_id is None and calls[-1].scope_slug == ""


def test_a_call_is_answered_even_when_it_cannot_be_logged(api):
    with connection.cursor() as cursor:  # the log's table is gone, inside this test's transaction only
        cursor.execute("ALTER TABLE accounts_apicall RENAME TO accounts_apicall_away")
    assert api.post("/scopes/alpha/recall", {"query": "Oslo"}).status_code == 200
    assert api.get("/scopes").status_code == 200  # the failed INSERT left the transaction usable


def test_a_team_admin_reads_the_scope_log_newest_first_and_paginated(cast, tokens, api):
    for text in ("one", "two", "three"):
        api.post("/scopes/alpha/remember", {"text": f"I like {text}"})
    Api(tokens["outsider"]).get("/scopes/alpha/entities")  # a refused knock on alpha is in its log too
    admin = Api()
    admin.client.force_login(cast.owner)
    page = admin.get("/scopes/alpha/log", limit=2).json()
    assert page["count"] == 4 and len(page["items"]) == 2
    newest = page["items"][0]
    assert (newest["user"], newest["status"], newest["operation"]) == ("outsider", 404, "GET /scopes/{slug}/entities")
    assert page["items"][1]["token"].startswith("mw_") and page["items"][1]["status"] == 202
    later = admin.get("/scopes/alpha/log", since=(timezone.now() + timedelta(minutes=1)).isoformat()).json()
    assert later["count"] == 0


def test_the_scope_log_is_refused_to_tokens_editors_and_other_teams(cast, tokens, api):
    assert api.get("/scopes/alpha/log").status_code == 403  # the admin's own token: tokens never administer
    editor = Api()
    editor.client.force_login(cast.editor)
    assert editor.get("/scopes/alpha/log").status_code == 403
    outsider = Api()
    outsider.client.force_login(cast.outsider)
    assert outsider.get("/scopes/alpha/log").status_code == 404
    assert Api().get("/scopes/alpha/log").status_code == 401


def test_a_call_is_logged_when_the_server_closes_its_response_not_before(cast, tokens):
    """The caller does not wait for its own log row: it is written when the WSGI server closes
    the response, after handing its bytes over."""
    import io
    import sys

    from django.core import signals
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import close_old_connections

    environ = {
        "REQUEST_METHOD": "GET", "PATH_INFO": "/api/v1/scopes", "SCRIPT_NAME": "", "QUERY_STRING": "", "SERVER_NAME": "testserver",
        "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_AUTHORIZATION": f"Bearer {tokens['rw']}", "wsgi.input": io.BytesIO(),
        "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr,
    }
    statuses = []
    # As Django's test client does: the test's transaction must survive the request's signals.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        response = WSGIHandler()(environ, lambda status, headers, exc_info=None: statuses.append(status))
        assert statuses == ["200 OK"] and b"alpha" in b"".join(response)
        assert not ApiCall.objects.exists()
        response.close()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
    assert list(ApiCall.objects.values_list("operation", "status")) == [("GET /scopes", 200)]
