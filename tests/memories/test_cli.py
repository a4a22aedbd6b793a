"""The CLI doors: `store`, `facts`, `retry`."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memoryweb.providers.llm import LLMError
from memories.models import Episode, EpisodeStatus, Fact


def call(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def store(committed, *args) -> str:
    with committed():
        return call("store", *args)


def test_store_prints_the_episode_and_the_facts_extraction_produced(cast, committed):
    store(committed, "I live in San Francisco", "--scope", "alpha", "--speaker", "ankesh", "--at", "2024-03-01", "--as", "editor")
    out = store(committed, "I moved from San Francisco to New York", "--scope", "alpha", "--speaker", "ankesh",
                "--at", "2025-02-10T09:00:00Z", "--as", "editor")
    episode = Episode.objects.order_by("id").last()
    assert out.splitlines()[0] == f"Stored episode {episode.public_id} (pending)."  # extraction runs after the commit
    assert episode.status == EpisodeStatus.DONE and episode.author == cast.editor and episode.source == "cli"
    out = call("facts", "--scope", "alpha", "--as", "viewer")
    assert "ankesh" in out and "lives_in" in out and "New York" in out and "since 2025-02-10" in out
    assert "San Francisco" not in out


@pytest.mark.django_db(transaction=True)
def test_store_without_a_broker_shows_the_extracted_facts_at_once(cast, capsys):
    call("store", "I live in San Francisco", "--scope", "alpha", "--speaker", "ankesh", "--at", "2024-03-01", "--as", "editor")
    out = call("store", "I moved from San Francisco to New York", "--scope", "alpha", "--speaker", "ankesh", "--at", "2025-02-10",
               "--as", "editor")
    assert "(done)." in out.splitlines()[0]
    assert "ankesh · lives_in · New York (was: San Francisco)" in out
    call("store", "I love chess", "--scope", "alpha", "--speaker", "ankesh", "--json", "--as", "editor")
    data = json.loads(capsys.readouterr().out)  # --json writes to sys.stdout
    assert data["episode"]["status"] == "done"
    assert [(f["attribute"], f["value"], f["status"]) for f in data["facts"]] == [("likes", "chess", "active")]


def test_facts_history_shows_chains_with_validity_intervals(cast, committed, capsys):
    store(committed, "I live in San Francisco", "--scope", "alpha", "--speaker", "ankesh", "--at", "2024-03-01", "--as", "owner")
    store(committed, "I moved to New York", "--scope", "alpha", "--speaker", "ankesh", "--at", "2025-02-10", "--as", "owner")
    out = call("facts", "--scope", "alpha", "--entity", "ankesh", "--history", "--as", "owner")
    lines = [line.split() for line in out.splitlines()]
    assert lines[0][:2] == ["ankesh", "lives_in"] and "2024-03-01" in lines[0] and "2025-02-10" in lines[0] and lines[0][-1] == "superseded"
    assert "New" in lines[1] and "now" in lines[1] and lines[1][-1] == "active"
    call("facts", "--scope", "alpha", "--history", "--json", "--as", "owner")
    data = json.loads(capsys.readouterr().out)
    assert [(f["value"], f["valid_to"] is None) for f in data["facts"]] == [("San Francisco", False), ("New York", True)]


def test_store_refuses_bad_input_viewers_and_outsiders_in_one_line(cast):
    cases = [
        (("", "--scope", "alpha", "--as", "owner"), "Text is empty"),
        (("hi", "--scope", "alpha", "--at", "next tuesday", "--as", "owner"), "is not a date"),
        (("hi", "--scope", "alpha", "--at", "2999-01-01", "--as", "owner"), "is in the future"),
        (("hi", "--scope", "nope", "--as", "owner"), "No scope named 'nope'"),
        (("hi", "--scope", "alpha", "--as", "viewer"), "You may not write scope 'alpha'"),
        (("hi", "--scope", "alpha", "--as", "outsider"), "No scope named 'alpha'"),
    ]
    for args, message in cases:
        with pytest.raises(CommandError, match=message):
            call("store", *args)
    assert not Episode.objects.exists()
    with pytest.raises(CommandError, match="No scope named 'alpha'"):
        call("facts", "--scope", "alpha", "--as", "outsider")
    with pytest.raises(CommandError, match="No entity named 'nobody'"):
        call("facts", "--scope", "alpha", "--entity", "nobody", "--as", "owner")


def test_retry_requeues_a_failed_episode(cast, committed, monkeypatch):
    class Broken:
        name, is_offline = "broken", True

        def extract(self, **kwargs):
            raise LLMError("no valid JSON after 3 attempts")

    monkeypatch.setattr("memories.extraction.extractors.extractor_get", lambda: Broken())
    store(committed, "I love chess", "--scope", "alpha", "--speaker", "ankesh", "--as", "owner")
    episode = Episode.objects.get()
    assert episode.status == EpisodeStatus.FAILED
    monkeypatch.undo()
    with committed():
        out = call("retry", str(episode.public_id), "--scope", "alpha", "--as", "editor")
    assert out.strip() == f"Episode {episode.public_id} is pending."
    episode.refresh_from_db()
    assert episode.status == EpisodeStatus.DONE and Fact.objects.get().value == "chess"
    with pytest.raises(CommandError, match="is done; only failed or pending"):
        call("retry", str(episode.public_id), "--scope", "alpha", "--as", "editor")
    with pytest.raises(CommandError, match="You may not write"):
        call("retry", str(episode.public_id), "--scope", "alpha", "--as", "viewer")
    with pytest.raises(CommandError, match="No episode"):
        call("retry", str(episode.public_id), "--scope", "alpha-two", "--as", "owner")
