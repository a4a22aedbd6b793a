"""Reserved names (memories/services/ingest.py): sources and speakers memoryweb writes itself are
refused from every caller with a 422 naming the value, and nothing is written; consolidation
still writes its own; the remote CLI and the SDK record their own sources, not the local CLI's."""

import re
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from accounts.tokens import token_issue
from memoryweb import cli_memory
from memoryweb.client import InvalidInput as ClientInvalidInput, MemoryWebClient
from memoryweb.errors import InvalidInput
from memories.models import CONSOLIDATION_SOURCE, Episode, Session, Turn
from memories.services.consolidate import consolidate
from memories.services.ingest import ingest_session, remember

pytestmark = pytest.mark.django_db


def nothing_written(scope) -> bool:
    return not (Episode.objects.in_scope(scope).exists() or Session.objects.in_scope(scope).exists() or Turn.objects.in_scope(scope).exists())


@pytest.mark.parametrize("speaker", ["consolidation", " Consolidation ", "[erased]", "[FORGOTTEN]"])
def test_the_service_refuses_a_reserved_speaker_and_writes_nothing(cast, speaker):
    with pytest.raises(InvalidInput, match=re.escape(f"Speaker {speaker.strip()!r} is reserved")):
        remember(scope=cast.scope_a, text="I live in Lisbon.", speaker=speaker, actor=cast.p_owner)
    messages = [{"id": "t1", "speaker": "ada", "text": "hello"}, {"id": "t2", "speaker": speaker, "text": "I live in Lisbon."}]
    with pytest.raises(InvalidInput, match=re.escape(f"Message 't2' speaker {speaker.strip()!r} is reserved")):
        ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=cast.p_owner)
    assert nothing_written(cast.scope_a)


def test_the_service_refuses_a_reserved_source(cast):
    with pytest.raises(InvalidInput, match="Source 'consolidation' is reserved"):
        remember(scope=cast.scope_a, text="I live in Lisbon.", actor=cast.p_owner, source=CONSOLIDATION_SOURCE)
    with pytest.raises(InvalidInput, match="Source 'Consolidation' is reserved"):
        ingest_session(scope=cast.scope_a, session_id="s1", messages=[{"id": "t1", "speaker": "ada", "text": "hi"}],
                       actor=cast.p_owner, source="Consolidation")
    assert nothing_written(cast.scope_a)


def test_an_ordinary_speaker_named_like_it_is_still_fine(cast):
    remember(scope=cast.scope_a, text="I consolidate reports.", speaker="consolidation team", actor=cast.p_owner)
    assert Episode.objects.in_scope(cast.scope_a).get().speaker == "consolidation team"


def test_the_api_answers_422_naming_the_reserved_value(cast):
    token = token_issue(actor=cast.p_owner, user=cast.owner, name="w", scopes=[cast.scope_a], can_write=True).secret
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    base = f"/api/v1/scopes/{cast.scope_a.slug}"
    for path, body in [
        ("remember", {"text": "I live in Lisbon.", "speaker": "consolidation"}),
        ("remember", {"text": "I live in Lisbon.", "source": "consolidation"}),
        ("sessions", {"session_id": "s1", "messages": [{"id": "t1", "speaker": "[erased]", "text": "hi"}]}),
        ("sessions", {"session_id": "s1", "source": "consolidation", "messages": [{"id": "t1", "speaker": "ada", "text": "hi"}]}),
    ]:
        reply = api.post(f"{base}/{path}", body, content_type="application/json")
        assert reply.status_code == 422, reply.content
        assert "is reserved for memoryweb's own records" in reply.json()["message"]
    assert nothing_written(cast.scope_a)
    reply = api.post(f"{base}/remember", {"text": "I live in Lisbon.", "source": "my-bot"}, content_type="application/json")
    assert reply.status_code == 202 and Episode.objects.in_scope(cast.scope_a).get().source == "my-bot"


def test_the_cli_and_the_page_refuse_it(cast):
    with pytest.raises(CommandError, match="Speaker 'consolidation' is reserved"):
        call_command("store", "I live in Lisbon.", "--scope", cast.scope_a.slug, "--speaker", "consolidation", "--as", "owner")
    browser = Client()
    browser.force_login(cast.owner)
    page = browser.post(f"/s/{cast.scope_a.slug}/", {"text": "I live in Lisbon.", "speaker": "consolidation"})
    assert page.status_code == 422 and b"is reserved for memoryweb" in page.content
    assert nothing_written(cast.scope_a)


def test_consolidation_still_writes_its_own_source(cast, django_capture_on_commit_callbacks):
    """Its writer creates the summary itself (memories/services/consolidate.py), past the check."""
    for n in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            remember(scope=cast.scope_a, text=f"I had tea number {n}.", speaker="ada", occurred_at=datetime(2020, 1, n + 1, tzinfo=UTC),
                     actor=cast.p_owner)
    Episode.objects.in_scope(cast.scope_a).update(importance=0.1)
    consolidate(principal=cast.p_owner, scope=cast.scope_a)
    assert Episode.objects.in_scope(cast.scope_a).filter(source=CONSOLIDATION_SOURCE).exists()


# ---------------------------------------------------------------- the remote CLI's own source


@pytest.mark.slow
def test_the_remote_cli_and_the_sdk_record_their_own_sources(server, mcp_world, capsys):
    token = mcp_world.tokens["write"]
    assert cli_memory.run("store", ["I live in Tromso", "--scope", "mcp-notes", "--speaker", "rem", "--url", server, "--token", token]) == 0
    with MemoryWebClient(server, token) as mw:
        sdk = mw.remember("mcp-notes", "I live in Bergen", speaker="sdk-user").episodes[0].episode_id
        with pytest.raises(ClientInvalidInput, match="Speaker 'consolidation' is reserved"):
            mw.remember("mcp-notes", "I live in Oslo", speaker="consolidation")
    assert Episode.objects.get(text="I live in Tromso").source == "cli-remote"
    assert Episode.objects.get(public_id=sdk).source == "sdk"
    assert not Episode.objects.filter(text="I live in Oslo").exists()


@pytest.mark.slow
def test_an_mcp_client_gets_a_tool_error_naming_it(mcp_world):
    from tests.integration.mcp_world import episode_count, error_text
    from tests.integration.test_mcp_stdio import run_stdio

    async def work(session):
        return await session.call_tool("remember", {"scope": "mcp-notes", "text": "I moved to Oslo", "speaker": "consolidation"})

    before = episode_count()
    _, refused = run_stdio(mcp_world, ["--as", "mcp-ada"], work)
    assert refused.is_error and "Speaker 'consolidation' is reserved" in error_text(refused)
    assert episode_count() == before


from tests.client.conftest import server, server_file  # noqa: E402, F401 (the live server of tests/client)
from tests.integration.conftest import mcp_world  # noqa: E402, F401
