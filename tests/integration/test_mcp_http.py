"""The official MCP client over streamable HTTP against a live `memoryweb serve` (one process for
the module, on the test database): the tools work for a valid token, and every refusal is an HTTP
401 before MCP or a tool error, with nothing written."""

import json

import anyio
import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.integration.mcp_world import (
    CALL_TIMEOUT, episode_count, error_text, expected_tools, live_server, payload, remember_recall_answer_history,
    server_env,
)
from tests.integration.workers import wait_for

# django_db: the test database is set up (and each test reads it in its own transaction).
pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(scope="module")
def server(mcp_world, tmp_path_factory):
    """`memoryweb serve` on a free port; yields its base URL; killed at the end of the module."""
    with live_server(server_env(mcp_world), tmp_path_factory.mktemp("mcp-http")) as url:
        yield url


def run_session(url: str, token: str | None, work):
    """Connect with the official client (bearer token, if any), initialize, run `work(session)`."""

    async def main():
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with anyio.fail_after(CALL_TIMEOUT):
            async with httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT) as http:
                async with streamable_http_client(f"{url}/mcp", http_client=http) as (read, write):
                    async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                        initialized = await session.initialize()
                        return initialized, await work(session)

    return anyio.run(main)


def test_initialize_and_list_tools(server, mcp_world):
    async def tools(session):
        return (await session.list_tools()).tools

    initialized, tools = run_session(server, mcp_world.tokens["write"], tools)
    assert initialized.server_info.name == "memoryweb"
    assert {tool.name for tool in tools} == expected_tools()
    for tool in tools:
        assert len(tool.description) > 100 and tool.input_schema["type"] == "object", tool.name
        if tool.name != "list_scopes":
            assert "scope" in tool.input_schema["required"], tool.name
            assert tool.input_schema["properties"]["scope"]["description"], tool.name


def test_a_write_token_remembers_recalls_answers_and_reads_the_history(server, mcp_world):
    run_session(server, mcp_world.tokens["write"], remember_recall_answer_history)


def test_list_scopes_shows_only_the_scopes_of_the_callers_token(server, mcp_world):
    async def scopes(session):
        return payload(await session.call_tool("list_scopes", {}))["scopes"]

    _, written = run_session(server, mcp_world.tokens["write"], scopes)
    _, read = run_session(server, mcp_world.tokens["read"], scopes)
    _, secret = run_session(server, mcp_world.tokens["secret-only"], scopes)
    assert [(s["slug"], s["access"]) for s in written] == [("mcp-notes", "write")]
    assert [(s["slug"], s["access"]) for s in read] == [("mcp-notes", "read")]
    assert [s["slug"] for s in secret] == ["mcp-secret"]


@pytest.mark.parametrize("token", [None, "mw_0123456789ab_wrong", "revoked"])
def test_no_bad_or_revoked_token_is_refused_with_401_before_mcp(server, mcp_world, token):
    bearer = mcp_world.tokens.get(token, token)
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"},
    }}
    response = httpx.post(f"{server}/mcp", json=initialize, headers={**headers, "Accept": "application/json, text/event-stream"}, timeout=30)
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized" and "API token" in response.json()["message"]
    assert response.headers["WWW-Authenticate"].startswith("Bearer")

    async def nothing(session):
        return None

    with pytest.raises(Exception):  # the official client does not get past initialize (an MCPError in a group)
        run_session(server, bearer, nothing)


def test_a_host_outside_allowed_hosts_is_refused(server, mcp_world):
    response = httpx.post(f"{server}/mcp", json={}, headers={"Host": "evil.example", "Authorization": f"Bearer {mcp_world.tokens['write']}"})
    assert response.status_code == 400 and response.json()["code"] == "bad_request"
    response = httpx.post(f"{server}/mcp", json={}, headers={"Origin": "http://evil.example", "Authorization": f"Bearer {mcp_world.tokens['write']}"})
    assert response.status_code == 403


def test_a_token_for_another_scope_gets_a_tool_error_naming_no_scope(server, mcp_world):
    async def calls(session):
        return [
            await session.call_tool("recall", {"scope": "mcp-notes", "query": "anything"}),
            await session.call_tool("remember", {"scope": "mcp-notes", "text": "I like tea"}),
            await session.call_tool("answer", {"scope": "mcp-elsewhere", "question": "Who?"}),
        ]

    before = episode_count()
    _, results = run_session(server, mcp_world.tokens["secret-only"], calls)
    assert [error_text(r) for r in results] == [
        "No scope named 'mcp-notes'.", "No scope named 'mcp-notes'.", "No scope named 'mcp-elsewhere'.",
    ]
    assert episode_count() == before


def test_a_read_only_token_cannot_remember_and_nothing_is_written(server, mcp_world):
    async def calls(session):
        refused = await session.call_tool("remember", {"scope": "mcp-notes", "text": "I moved to Lisbon", "speaker": "ada"})
        allowed = await session.call_tool("recall", {"scope": "mcp-notes", "query": "Lisbon"})
        return refused, allowed

    before = episode_count()
    _, (refused, allowed) = run_session(server, mcp_world.tokens["read"], calls)
    assert error_text(refused) == "You may not write scope 'mcp-notes'."
    assert not any("Lisbon" in item["text"] for item in payload(allowed)["results"])
    assert episode_count() == before


def test_bad_input_is_a_tool_error_with_the_reason(server, mcp_world):
    async def calls(session):
        return [
            await session.call_tool("remember", {"scope": "mcp-notes", "text": "   "}),
            await session.call_tool("remember", {"scope": "mcp-notes", "text": "hi", "occurred_at": "yesterday-ish"}),
            await session.call_tool("recall", {"scope": "mcp-notes", "query": "x", "k": 500}),
        ]

    _, (empty, bad_date, too_many) = run_session(server, mcp_world.tokens["write"], calls)
    assert error_text(empty) == "Text is empty."
    assert "is not a date" in error_text(bad_date)
    assert "k" in error_text(too_many) and "less than or equal to 50" in error_text(too_many)


def test_forget_erases_an_episode_so_recall_no_longer_finds_it(server, mcp_world):
    services = pytest.importorskip("retrieval.services")
    if not hasattr(services, "episode_forget"):
        pytest.skip("retrieval.services.episode_forget is not on this branch yet")

    async def calls(session):
        stored = payload(await session.call_tool("remember", {"scope": "mcp-notes", "text": "My locker code is 4711", "speaker": "ada"}))
        episode_id = str(stored["episodes"][0]["episode_id"])
        receipt = payload(await session.call_tool("forget", {"scope": "mcp-notes", "episode_id": episode_id}))
        found = payload(await session.call_tool("recall", {"scope": "mcp-notes", "query": "locker code 4711"}))
        return receipt, found

    _, (receipt, found) = run_session(server, mcp_world.tokens["write"], calls)
    assert receipt
    assert not any("4711" in item["text"] for item in found["results"])


def test_remember_with_an_idempotency_key_twice_writes_once_and_every_call_is_logged(server, mcp_world):
    from accounts.models import ApiCall

    arguments = {"scope": "mcp-notes", "text": "I keep bees on the roof", "speaker": "ada", "idempotency_key": "live-bees-1"}

    async def calls(session):
        return [await session.call_tool("remember", arguments), await session.call_tool("remember", arguments)]

    remembered = ApiCall.objects.filter(door="mcp", operation="remember", status=200, scope__slug="mcp-notes")
    before, logged = episode_count(), remembered.count()
    _, (first, again) = run_session(server, mcp_world.tokens["write"], calls)
    assert first.content[0].text == again.content[0].text
    assert episode_count() == before + 1
    wait_for(lambda: remembered.count() >= logged + 2, timeout=10, interval=0.1)  # written within MEMORYWEB_CALL_LOG_DELAY
    assert remembered.count() == logged + 2
    refused = httpx.post(f"{server}/mcp", json={}, headers={"Accept": "application/json, text/event-stream"}, timeout=30)
    assert refused.status_code == 401
    # A refusal is logged just after its answer went out.
    wait_for(lambda: ApiCall.objects.filter(door="mcp", status=401, user__isnull=True).exists(), timeout=10, interval=0.1)


def test_hostile_values_come_back_over_http_as_json_strings(server, mcp_world):
    """Markup, script, control characters and a right-to-left override, remembered and read back
    through the official client over HTTP: each tool's text is JSON with every control character
    escaped, and the values decode to exactly what was stored (tests/hostile.py's payloads)."""
    import re

    from tests.hostile import CONTROL, RTL, SCRIPT, SVG

    text = f"My locker note is {SCRIPT} {SVG} {CONTROL} {RTL}"
    speaker = f'<img id="pwn-speaker" src=x onerror="alert(1)">{RTL}'

    async def calls(session):
        stored = await session.call_tool("remember", {"scope": "mcp-notes", "text": text, "speaker": speaker})
        found = await session.call_tool("recall_evidence", {"scope": "mcp-notes", "query": "locker note pwn-script"})
        return stored, found

    _, (stored, found) = run_session(server, mcp_world.tokens["write"], calls)
    for result in (stored, found):
        raw = result.content[0].text
        assert not re.search(r"[\x00-\x1f]", raw), f"an unescaped control character in {raw[:200]!r}"
    evidence = json.dumps(payload(found), ensure_ascii=False)
    assert payload(stored)["episodes"]
    assert json.dumps(text, ensure_ascii=False)[1:-1] in evidence  # the text, whole and unchanged
