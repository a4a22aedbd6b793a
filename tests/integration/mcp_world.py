"""What the MCP tests share: a cast committed to the test database (the server runs in another
process, so it must see it), the server process's environment, and reading tool results."""

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from django.core.management import call_command
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]

# Bounds for every await in the MCP tests: a hung server fails the test instead of the suite.
CALL_TIMEOUT = 60


@dataclass
class World:
    """ada owns team mcp-team (scopes mcp-notes, mcp-secret); vic is a viewer there; otto owns
    mcp-other (scope mcp-elsewhere). Tokens are ada's, each limited as its name says."""

    database: str
    tokens: dict[str, str] = field(default_factory=dict)


def world_create() -> World:
    from accounts.models import Role
    from accounts.permissions import Principal
    from accounts.services import membership_set, team_create, user_create
    from accounts.tokens import token_issue, token_revoke
    from memories.models import Scope

    database = connection.settings_dict["NAME"]
    # pytest-django sets up the test database only for runs that collect a django_db test; the
    # MCP modules mark theirs, and this refuses to commit rows to (or later flush) anything else.
    assert database.startswith("test_"), f"refusing to create the MCP test cast in database {database!r}"
    ada = user_create(username="mcp-ada", password=None)
    vic = user_create(username="mcp-vic", password=None)
    otto = user_create(username="mcp-otto", password=None)
    team = team_create(actor=None, slug="mcp-team", owner=ada)
    membership_set(team=team, user=vic, role=Role.VIEWER)
    other = team_create(actor=None, slug="mcp-other", owner=otto)
    notes = Scope.objects.create(team=team, slug="mcp-notes", name="Notes", description="What the team was told")
    secret = Scope.objects.create(team=team, slug="mcp-secret", name="Secret")
    Scope.objects.create(team=other, slug="mcp-elsewhere", name="Elsewhere")

    actor = Principal(user=ada)
    world = World(database=database)
    for name, scopes, can_write in [
        ("write", [notes], True), ("read", [notes], False), ("secret-only", [secret], True), ("revoked", [notes], True),
    ]:
        issued = token_issue(actor=actor, user=ada, name=name, scopes=scopes, can_write=can_write)
        world.tokens[name] = issued.secret
        if name == "revoked":
            token_revoke(token=issued.token, actor=actor)
    return world


def world_flush() -> None:
    """Empty the test database again, as a transactional test would have left it."""
    assert connection.settings_dict["NAME"].startswith("test_")
    call_command("flush", interactive=False, verbosity=0)


def server_env(world: World) -> dict[str, str]:
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "memoryweb.settings", "MEMORYWEB_DATABASE_NAME": world.database,
        "EMBEDDER": "hash", "LLM_PROVIDER": "offline", "MEMORYWEB_WARM_UP": "0", "PYTHONPATH": str(ROOT),
        "MEMORYWEB_LOCAL_ACCESS": "false",  # a test server must not offer itself to the CLIs sharing MEMORYWEB_HOME
        # Extraction and indexing inside the request, so a remembered text is extracted and searchable
        # when the call returns (a server's default is its background runner: test_concurrent_writers.py).
        "MEMORYWEB_BACKGROUND": "false",
    }
    env.pop("REDIS_URL", None)  # tasks run in the server process
    return env


def memoryweb_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "memoryweb.cli", *args]


@contextmanager
def live_server(env: dict[str, str], log_dir: Path):
    """`memoryweb serve` with `env` on a free port; yields its base URL; stopped (SIGTERM, then
    SIGKILL) when the block ends. Its output goes to `log_dir/serve.log`, shown if it fails to start."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_path = log_dir / "serve.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            memoryweb_command("serve", "--port", str(port), "--no-migrate"), cwd=ROOT, env=env,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, proc, log_path)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _wait_until_up(url: str, proc: subprocess.Popen, log_path: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"memoryweb serve exited with {proc.returncode}:\n{log_path.read_text()}")
        try:
            httpx.get(f"{url}/healthz", timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.3)
    pytest.fail(f"memoryweb serve did not answer within {timeout} s:\n{log_path.read_text()}")


def episode_count() -> int:
    from memories.models import Episode

    return Episode.objects.count()


def payload(result) -> dict:
    """The JSON a successful tool call returned."""
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def error_text(result) -> str:
    """The message of a refused tool call."""
    assert result.is_error, result.content[0].text
    return result.content[0].text


EXPECTED_TOOLS = {"remember", "recall", "recall_evidence", "answer", "history", "list_scopes"}


def expected_tools() -> set[str]:
    from retrieval import services

    return EXPECTED_TOOLS | ({"forget"} if hasattr(services, "episode_forget") else set())


async def remember_recall_answer_history(session, *, scope: str = "mcp-notes") -> None:
    """The core every transport must serve: a move is remembered, found, answered and kept in the history."""
    first = payload(await session.call_tool("remember", {
        "scope": scope, "text": "I live in San Francisco", "speaker": "ada", "occurred_at": "2024-01-05",
    }))
    assert first["episodes"][0]["status"] == "done" and first["episodes"][0]["created"]
    assert [(f["attribute"], f["value"]) for f in first["facts"]] == [("lives_in", "San Francisco")]
    moved = payload(await session.call_tool("remember", {
        "scope": scope, "text": "I moved to New York", "speaker": "ada", "occurred_at": "2025-02-10",
    }))
    new_fact = next(f for f in moved["facts"] if f["attribute"] == "lives_in")
    assert new_fact["value"] == "New York" and new_fact["supersedes"] == first["facts"][0]["id"]
    assert new_fact["source_episode"] == str(moved["episodes"][0]["episode_id"]) and new_fact["provenance"] == "extracted"

    found = payload(await session.call_tool("recall", {"scope": scope, "query": "where does ada live?", "speaker": "ada"}))
    top = found["results"][0]
    assert (top["kind"], top["id"], top["value"], top["valid_to"]) == ("fact", new_fact["id"], "New York", None)
    assert set(top["lanes"]) == {"similarity", "importance", "recency"}

    evidence = payload(await session.call_tool("recall_evidence", {"scope": scope, "query": "San Francisco"}))
    assert any("San Francisco" in item["text"] for item in evidence["results"])

    reply = payload(await session.call_tool("answer", {"scope": scope, "question": "Where do I live?", "speaker": "ada"}))
    assert "New York" in reply["answer"] and new_fact["id"] in reply["citations"]

    chain = payload(await session.call_tool("history", {"scope": scope, "entity": "ada", "attribute": "lives_in"}))
    assert [(f["value"], f["status"], f["valid_to"] is None) for f in chain["facts"]] == [
        ("San Francisco", "superseded", False), ("New York", "active", True),
    ]
