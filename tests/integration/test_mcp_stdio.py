"""The official MCP client over stdio against `memoryweb mcp` processes on the test database:
acting as a user (`--as`) or through a token (`--token`), the same tools and the same refusals."""

import subprocess
import tempfile

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.integration.mcp_world import (
    CALL_TIMEOUT, ROOT, episode_count, error_text, expected_tools, memoryweb_command, payload,
    remember_recall_answer_history, server_env,
)

# django_db: the test database is set up (and each test reads it in its own transaction).
pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def run_stdio(world, options: list[str], work):
    """Start `memoryweb mcp OPTIONS`, initialize, run `work(session)`; the process ends with the session."""
    command, *args = memoryweb_command("mcp", *options)
    parameters = StdioServerParameters(command=command, args=args, env=server_env(world), cwd=ROOT)

    async def main():
        with anyio.fail_after(CALL_TIMEOUT * 2), tempfile.TemporaryFile("w+") as errlog:
            try:
                async with stdio_client(parameters, errlog=errlog) as (read, write):
                    async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                        initialized = await session.initialize()
                        return initialized, await work(session)
            except BaseException:
                errlog.seek(0)
                print("memoryweb mcp stderr:\n" + errlog.read())
                raise

    return anyio.run(main)


def test_as_a_user_the_tools_are_listed_and_the_core_works(mcp_world):
    async def work(session):
        tools = (await session.list_tools()).tools
        await remember_recall_answer_history(session)
        scopes = payload(await session.call_tool("list_scopes", {}))["scopes"]
        elsewhere = await session.call_tool("recall", {"scope": "mcp-elsewhere", "query": "anything"})
        return tools, scopes, elsewhere

    initialized, (tools, scopes, elsewhere) = run_stdio(mcp_world, ["--as", "mcp-ada"], work)
    assert initialized.server_info.name == "memoryweb"
    assert {tool.name for tool in tools} == expected_tools()
    assert all(tool.description and tool.input_schema["type"] == "object" for tool in tools)
    assert [(s["slug"], s["access"]) for s in scopes] == [("mcp-notes", "write"), ("mcp-secret", "write")]
    assert error_text(elsewhere) == "No scope named 'mcp-elsewhere'."


def test_a_viewer_cannot_remember_and_nothing_is_written(mcp_world):
    async def work(session):
        return await session.call_tool("remember", {"scope": "mcp-notes", "text": "I moved to Oslo"})

    before = episode_count()
    _, refused = run_stdio(mcp_world, ["--as", "mcp-vic"], work)
    assert error_text(refused) == "You may not write scope 'mcp-notes'."
    assert episode_count() == before


def test_through_a_token_the_tools_keep_to_its_scope_and_rights(mcp_world):
    async def work(session):
        return (
            payload(await session.call_tool("list_scopes", {}))["scopes"],
            await session.call_tool("remember", {"scope": "mcp-notes", "text": "I moved to Lisbon"}),
            await session.call_tool("recall", {"scope": "mcp-secret", "query": "anything"}),
            payload(await session.call_tool("recall", {"scope": "mcp-notes", "query": "Lisbon"})),
        )

    before = episode_count()
    _, (scopes, remembered, secret, found) = run_stdio(mcp_world, ["--token", mcp_world.tokens["read"]], work)
    assert [(s["slug"], s["access"]) for s in scopes] == [("mcp-notes", "read")]
    assert error_text(remembered) == "You may not write scope 'mcp-notes'."
    assert error_text(secret) == "No scope named 'mcp-secret'."
    assert not any("Lisbon" in item["text"] for item in found["results"])
    assert episode_count() == before


@pytest.mark.parametrize("options", [["--token", "revoked"], ["--token", "mw_0123456789ab_wrong"], ["--as", "nobody"]])
def test_a_revoked_or_wrong_token_or_unknown_user_ends_before_serving(mcp_world, options):
    options = [mcp_world.tokens.get(option, option) for option in options]
    done = subprocess.run(
        memoryweb_command("mcp", *options), cwd=ROOT, env=server_env(mcp_world), input="", capture_output=True, text=True,
        timeout=CALL_TIMEOUT,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "not valid" in done.stderr or "No active user named 'nobody'" in done.stderr, done.stderr
