"""Hostile stored values (tests/hostile.py) leave the API, MCP tools and exports as JSON strings:
the response is JSON (never HTML, and the browser is told not to sniff it), every control
character is escaped, and each value parses back to exactly what was stored, markup and
right-to-left override included."""

import asyncio
import gzip
import json
import re

import pytest
from django.test import Client

from accounts.permissions import Principal
from memoryweb import mcp
from tests.api.conftest import Api
from tests.hostile import CONTROL, NAME, RTL, SCRIPT, SVG, TOKEN_NAME, hostile_world

# The MCP tools run the ORM on another thread, which sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)

RAW_CONTROL = re.compile(r"[\x00-\x1f]")  # JSON must escape these; a raw one in the body is a bug


@pytest.fixture
def world(cast):
    return hostile_world(cast)


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def parsed(body: str):
    assert not RAW_CONTROL.search(body), f"an unescaped control character in {body[:200]!r}"
    return json.loads(body)


def test_api_answers_hostile_values_as_json_strings(world):
    api = Api(world.token.secret)
    person = str(world.person.public_id)
    stored_value = world.fact.value
    responses = {
        "scopes": api.get("/scopes"),
        "entities": api.get("/scopes/evil/entities", q="invoice"),
        "entity": api.get(f"/scopes/evil/entities/{person}"),
        "facts": api.get("/scopes/evil/facts"),
        "episode": api.get(f"/scopes/evil/episodes/{world.episode.public_id}"),
        "history": api.get("/scopes/evil/history", entity=person),
        "recall": api.post("/scopes/evil/recall", {"query": "where does the invoice person live"}),
    }
    for name, response in responses.items():
        assert response.status_code == 200, (name, response.content[:300])
        assert response["Content-Type"].startswith("application/json"), name
        assert response["X-Content-Type-Options"] == "nosniff", name
        responses[name] = list(strings(parsed(response.content.decode())))
    assert NAME in responses["scopes"]
    assert NAME in responses["entities"] and NAME in responses["entity"]
    assert stored_value in responses["facts"] and stored_value in responses["entity"]
    assert SCRIPT in stored_value and RTL in stored_value
    assert any(CONTROL in s for s in responses["episode"])  # the raw text, control characters intact
    assert NAME in responses["history"]


def test_mcp_tools_answer_hostile_values_as_json_text(world):
    principal = Principal.for_token(world.token.token)

    async def call(name: str, arguments: dict):
        token = mcp.current_principal.set(principal)
        try:
            return await asyncio.wait_for(mcp.server.call_tool(name, arguments), timeout=60)
        finally:
            mcp.current_principal.reset(token)

    texts = {}
    for name, arguments in {
        "list_scopes": {},
        "recall": {"scope": "evil", "query": "where does the invoice person live"},
        "recall_evidence": {"scope": "evil", "query": "Lisbon"},
        "history": {"scope": "evil", "entity": str(world.person.public_id)},
    }.items():
        result = asyncio.run(call(name, arguments))
        assert not result.is_error, (name, result.content[0].text)
        texts[name] = list(strings(parsed(result.content[0].text)))
    assert NAME in texts["list_scopes"]
    assert world.fact.value in texts["history"]
    assert any(CONTROL in s for s in texts["recall_evidence"])


def test_the_export_holds_hostile_values_as_json_strings(world):
    owner = Client()  # a team admin's session: tokens never back up
    owner.force_login(world.owner)
    response = owner.get("/api/v1/scopes/evil/export")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/gzip"
    body = gzip.decompress(b"".join(response.streaming_content)).decode()
    values = [s for line in body.splitlines() for s in strings(parsed(line))]
    assert NAME in values and world.fact.value in values and SVG in values
    assert any(CONTROL in s for s in values)
    assert TOKEN_NAME not in values  # tokens are not part of a scope's backup
