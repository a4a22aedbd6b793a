"""The client and the remote CLI against a live `memoryweb serve` (one process for the module, on
the test database, with the MCP tests' cast): a round trip, the errors, the same output as the
local CLI, and the local server's fast path and its fallback."""

import json
import os
import stat
import subprocess

import pytest
from django.core.management import call_command

from accounts.models import ApiToken, AuditEvent
from memoryweb import cli, cli_memory, local_server
from memoryweb.client import Forbidden, InvalidInput, MemoryWebClient, NotFound, Unauthorized
from memoryweb.management.local_access import TOKEN_NAME
from tests.integration.mcp_world import ROOT, live_server, memoryweb_command, server_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def test_remember_recall_answer_forget_round_trip(server, mcp_world):
    with MemoryWebClient(server, mcp_world.tokens["write"]) as mw:
        stored = mw.remember("mcp-notes", "I live in Reykjavik", speaker="rita", occurred_at="2024-03-01")
        episode_id = stored.episodes[0].episode_id
        assert mw.episode("mcp-notes", episode_id).status == "done"
        found = mw.recall("mcp-notes", "where does rita live?", speaker="rita")
        top = found.items[0]
        assert (top.kind, top.subject, top.value) == ("fact", "rita", "Reykjavik") and set(top.lanes) >= {"similarity"}
        reply = mw.answer("mcp-notes", "Where do I live?", speaker="rita")
        assert "Reykjavik" in reply.text and top.id in reply.citations
        assert [f.value for f in mw.facts("mcp-notes", entity="rita")] == ["Reykjavik"]
        assert [f.value for f in mw.history("mcp-notes", "rita", "lives_in")] == ["Reykjavik"]

        receipt = mw.forget("mcp-notes", episode_id)
        assert receipt.episode_id == episode_id and receipt.scope == "mcp-notes" and receipt.counts["episodes"] == 1
        assert not any("Reykjavik" in item.text for item in mw.recall("mcp-notes", "Reykjavik rita").items)
        assert not any("Reykjavik" in item.text for item in mw.recall_evidence("mcp-notes", "Reykjavik").items)
        with pytest.raises(NotFound):
            mw.episode("mcp-notes", episode_id)


def test_refusals_raise_their_class_with_the_servers_message(server, mcp_world):
    with pytest.raises(Unauthorized, match="A valid API token is required"):
        MemoryWebClient(server, "mw_000000000000_wrong").scopes()
    with pytest.raises(Forbidden, match="You may not write scope 'mcp-notes'."):
        MemoryWebClient(server, mcp_world.tokens["read"]).remember("mcp-notes", "I moved to Rome")
    with pytest.raises(NotFound, match="No scope named 'mcp-notes'."):
        MemoryWebClient(server, mcp_world.tokens["secret-only"]).recall("mcp-notes", "anything")
    with pytest.raises(InvalidInput) as raised:
        MemoryWebClient(server, mcp_world.tokens["read"]).recall("mcp-notes", "anything", k=0)
    assert raised.value.status == 422 and [e["field"] for e in raised.value.errors] == ["k"]


def _local(capsys, *args) -> str:
    capsys.readouterr()
    call_command(*args, "--as", "mcp-ada")
    return capsys.readouterr().out


def _local_process(mcp_world, tmp_path, *args) -> str:
    """The local CLI in its own process, committing as it does for a user (extraction runs at the commit)."""
    env = {**server_env(mcp_world), "MEMORYWEB_SERVER_FILE": str(tmp_path / "none.json")}
    done = subprocess.run(memoryweb_command(*args, "--as", "mcp-ada"), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _remote(capsys, server, token, *args) -> str:
    capsys.readouterr()
    assert cli_memory.run(args[0], [*args[1:], "--url", server, "--token", token]) == 0
    return capsys.readouterr().out


def test_the_remote_cli_prints_what_the_local_cli_prints(server, mcp_world, capsys, tmp_path):
    token = mcp_world.tokens["write"]
    remote = json.loads(_remote(capsys, server, token, "store", "I live in Lisbon", "--scope", "mcp-notes", "--speaker", "lia",
                                "--at", "2024-01-01", "--json"))
    local = json.loads(_local_process(mcp_world, tmp_path, "store", "I moved to Porto", "--scope", "mcp-notes", "--speaker", "lia", "--at", "2025-01-01",
                              "--json"))
    assert _skeleton(remote) == _skeleton(local)
    assert [(f["attribute"], f["value"]) for f in remote["facts"]] == [("lives_in", "Lisbon")]
    assert [(f["attribute"], f["value"]) for f in local["facts"]] == [("lives_in", "Porto")]
    text = _remote(capsys, server, token, "store", "I moved to Faro", "--scope", "mcp-notes", "--speaker", "lia", "--at", "2025-06-01")
    assert text.splitlines()[1] == "  lia · lives_in · Faro (was: Porto)"

    for args in (["recall", "where does lia live?", "--scope", "mcp-notes", "--speaker", "lia"],
                 ["facts", "--scope", "mcp-notes", "--entity", "lia", "--history"]):
        assert _remote(capsys, server, token, *args, "--json") == _local(capsys, *args, "--json")
        assert _remote(capsys, server, token, *args) == _local(capsys, *args)


def _skeleton(data):
    """The shape of a JSON value, its keys and nesting, without the values that differ between two stores."""
    if isinstance(data, dict):
        return {key: _skeleton(value) for key, value in data.items() if key != "source"}
    if isinstance(data, list):
        return [_skeleton(value) for value in data]
    return None


def test_the_server_advertises_itself_0600_with_limited_audited_tokens(server, server_file):
    assert stat.S_IMODE(os.stat(server_file).st_mode) == 0o600
    info = json.loads(server_file.read_text())
    assert info["url"] == server and info["user"] == "mcp-ada"
    assert info["tokens"]["read"]["scopes"] == info["tokens"]["write"]["scopes"] == ["mcp-notes", "mcp-secret"]
    read = ApiToken.objects.get(prefix=info["tokens"]["read"]["prefix"])
    write = ApiToken.objects.get(prefix=info["tokens"]["write"]["prefix"])
    assert (read.name, read.can_write, write.can_write) == (TOKEN_NAME, False, True)
    assert AuditEvent.objects.filter(action="token.create", target_id=str(write.public_id)).exists()


def test_the_cli_uses_the_local_server_without_starting_django(server, cli_env, monkeypatch, capsys):
    def no_django(argv):
        raise AssertionError("the local path ran")

    monkeypatch.setattr(cli, "_utility", no_django)
    with pytest.raises(SystemExit) as done:
        cli.main(["memoryweb", "facts", "--scope", "mcp-notes", "--entity", "lia", "--json"])
    assert done.value.code == 0
    assert [f["value"] for f in json.loads(capsys.readouterr().out)["facts"]] == ["Faro"]
    # Another user, or a scope the local tokens do not cover, is left to the local path.
    assert local_server.local_access(user="mcp-vic", scope="mcp-notes", access="read") is None
    assert local_server.local_access(user=None, scope="mcp-elsewhere", access="read") is None


def test_the_cli_falls_back_to_the_local_path_when_the_server_is_gone(mcp_world, cli_env, server_file, monkeypatch, tmp_path):
    gone = tmp_path / "server.json"
    gone.write_text(json.dumps({**json.loads(server_file.read_text()), "url": "http://127.0.0.1:9"}))  # nothing listens there
    monkeypatch.setenv("MEMORYWEB_SERVER_FILE", str(gone))
    ran = []
    monkeypatch.setattr(cli, "_utility", lambda argv: ran.append(argv) or _Stub())
    cli.main(["memoryweb", "recall", "where does lia live?", "--scope", "mcp-notes"])
    assert ran and ran[0][1] == "recall"


class _Stub:
    def execute(self):
        pass


def test_a_stopped_server_withdraws_its_file_and_revokes_its_tokens(mcp_world, tmp_path):
    env = {**server_env(mcp_world), "MEMORYWEB_LOCAL_ACCESS": "true", "MEMORYWEB_SERVER_FILE": str(tmp_path / "server.json"),
           "MEMORYWEB_CLI_USER": "mcp-vic"}
    with live_server(env, tmp_path):
        info = json.loads((tmp_path / "server.json").read_text())
        assert info["user"] == "mcp-vic" and "write" not in info["tokens"]  # a viewer gets no token that writes
    assert not (tmp_path / "server.json").exists()
    assert ApiToken.objects.get(prefix=info["tokens"]["read"]["prefix"]).revoked_at is not None
