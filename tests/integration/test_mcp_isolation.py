"""Every MCP tool × every caller that must be refused, in-process: a tool error, and no row changed.

The live tests (test_mcp_http.py, test_mcp_stdio.py) drive the official client through both
transports; this one walks the whole matrix cheaply through the same server object and the same
authentication wrapper that `/mcp` uses."""

import asyncio
import json
from datetime import timedelta

import httpx
import pytest
from django.apps import apps
from django.utils import timezone

from accounts.models import ApiToken
from accounts.permissions import Principal
from accounts.tokens import token_issue
from memories.models import Fact, FactStatus
from memories.services.ingest import remember
from memoryweb import mcp

# The tools run the ORM on another thread (sync_to_async), which sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = [
    ("recall", {"scope": "alpha", "query": "where does ada live"}, False),
    ("recall_evidence", {"scope": "alpha", "query": "where does ada live"}, False),
    ("answer", {"scope": "alpha", "question": "where does ada live?"}, False),
    ("history", {"scope": "alpha", "entity": "ada"}, False),
    ("remember", {"scope": "alpha", "text": "I moved to Oslo"}, True),
    ("forget", {"scope": "alpha", "episode_id": "{episode}"}, True),
]


def _call(principal: Principal, name: str, arguments: dict):
    async def run():
        token = mcp.current_principal.set(principal)
        try:
            return await asyncio.wait_for(mcp.server.call_tool(name, arguments), timeout=60)
        finally:
            mcp.current_principal.reset(token)

    return asyncio.run(run())


def _state() -> list:
    # The caller log records every call, refused ones too: that it grows is the point.
    counts = {model._meta.label: model.objects.count() for app in ("accounts", "memories", "retrieval")
              for model in apps.get_app_config(app).get_models() if model._meta.label != "accounts.ApiCall"}
    return list(Fact.objects.order_by("pk").values_list("pk", "status", "value", "valid_to")) + [counts]


@pytest.fixture
def world(cast, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        stored = remember(scope=cast.scope_a, text="I moved from San Francisco to New York", speaker="ada", actor=cast.p_owner)
    assert Fact.objects.filter(attribute="lives_in", status=FactStatus.ACTIVE).exists()
    issue = lambda **kw: token_issue(actor=cast.p_owner, user=cast.owner, scopes=[cast.scope_a], **kw)  # noqa: E731
    revoked, expired = issue(name="revoked", can_write=True), issue(name="expired", can_write=True,
                                                                   expires_at=timezone.now() + timedelta(hours=1))
    ApiToken.objects.filter(pk=revoked.token.pk).update(revoked_at=timezone.now())
    ApiToken.objects.filter(pk=expired.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    outsider = token_issue(actor=cast.p_outsider, user=cast.outsider, name="o", scopes=[cast.scope_b], can_write=True)
    return {
        "episode": str(stored.episodes[0].episode_id),
        "secrets": {"revoked": revoked.secret, "expired": expired.secret, "rw": issue(name="rw", can_write=True).secret},
        # A principal whose token was revoked or expired after it was authenticated (a long stdio session).
        "refused": {
            "read-only token": (Principal.for_token(issue(name="ro").token), None, "You may not write scope 'alpha'."),
            "another scope's token": (Principal.for_token(outsider.token), "No scope named 'alpha'.", "No scope named 'alpha'."),
            "viewer": (cast.p_viewer, None, "You may not write scope 'alpha'."),
            "another team's user": (cast.p_outsider, "No scope named 'alpha'.", "No scope named 'alpha'."),
            "revoked after it was authenticated": (
                _expire_soon(Principal.for_token(revoked.token)), "No scope named 'alpha'.", "No scope named 'alpha'."),
        },
    }


def _expire_soon(principal: Principal) -> Principal:
    principal._checked_at[0] -= 10  # its token row is re-read on the next check, as a second later
    return principal


def test_every_tool_refuses_every_caller_it_must_with_a_tool_error(world):
    before = _state()
    failures = []
    for who, (principal, read_error, write_error) in world["refused"].items():
        for name, arguments, writes in TOOLS:
            expected = write_error if writes else read_error
            if expected is None:
                continue
            arguments = {k: v.format(**world) if isinstance(v, str) else v for k, v in arguments.items()}
            result = _call(principal, name, arguments)
            text = result.content[0].text
            if not result.is_error or expected not in text:
                failures.append(f"{who}: {name} → is_error={result.is_error}, {text[:120]!r}")
    assert not failures, "\n".join(failures)
    assert _state() == before


def test_the_reads_a_read_only_caller_may_make_succeed(world):
    principal = world["refused"]["read-only token"][0]
    for name, arguments, writes in TOOLS:
        if not writes:
            result = _call(principal, name, arguments)
            assert not result.is_error, (name, result.content[0].text)
            json.loads(result.content[0].text)


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-token", "Basic abc", "Bearer {revoked}", "Bearer {expired}",
                                           "Bearer {wrong}"])
def test_the_http_door_refuses_bad_tokens_before_mcp(world, authorization):
    secrets = {**world["secrets"], "wrong": world["secrets"]["rw"][:-4] + "zzzz"}
    reached = []

    async def inner(scope, receive, send):  # stands for the SDK's app: must never be reached
        reached.append(scope["path"])

    async def run():
        headers = {"host": "127.0.0.1", "accept": "application/json, text/event-stream"}
        if authorization:
            headers["authorization"] = authorization.format(**secrets)
        transport = httpx.ASGITransport(app=mcp.McpAuth(inner))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await asyncio.wait_for(client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                                      headers=headers), timeout=30)

    response = asyncio.run(run())
    assert response.status_code == 401 and response.json()["code"] == "unauthorized"
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert not reached
