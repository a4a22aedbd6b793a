"""Consolidation: old, unimportant episodes become summary episodes, once; the originals are kept,
linked and still found, with their facts; the model's summary through recorded replies, and its
garbage leaving everything untouched."""

import contextlib
import io
import json
import threading
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from accounts.models import AuditEvent
from memoryweb.errors import Forbidden, NotFound
from memories.models import CONSOLIDATION_SOURCE, Episode, EpisodeStatus, Fact, Mention, Scope
from memories.services.consolidate import consolidate, consolidate_scopes
from memories.services.ingest import remember
from retrieval.backup import scope_backup, scope_restore
from retrieval.forget import episode_forget
from retrieval.indexing import index_pending
from retrieval.search import recall
from retrieval.search.hydration import SUMMARY_PREFERENCE
from tests.replay import load_recordings, replay_server  # noqa: F401  (a fixture)

from .conftest import at

SMALL_TALK = {
    ("ankesh", 3): ["We watched the lantern festival by the river.", "Rainy Sunday, stayed in with tea. Nothing else.",
                    "The bakery on Elm Street sells good rye bread."],
    ("ankesh", 4): ["Tried the new climbing gym downtown.", "Lunch with the team at the noodle bar."],
    ("maya", 3): ["My tomato seedlings finally sprouted.", "Finished reading a mystery novel about a lighthouse."],
}


@pytest.fixture
def say(committed):
    """`say(scope, text, speaker=, when=, owner=, importance=0.1)`: an episode through the real
    ingest path (extracted offline as its commit would), then given the importance the test needs."""
    def said(scope, text, *, speaker, when, owner, importance=0.1):
        with committed():
            result = remember(scope=scope, text=text, speaker=speaker, occurred_at=when, actor=owner)
        episode = Episode.objects.get(public_id=result.episodes[0].episode_id)
        assert episode.status == EpisodeStatus.DONE, episode.error
        Episode.objects.filter(pk=episode.pk).update(importance=importance)
        episode.refresh_from_db()
        return episode
    return said


@pytest.fixture
def old_talk(cast, say):
    """Seven old small-talk episodes in three (subject, month) groups, plus one of each kind that
    must not be taken: recent, important, never scored (importance NULL)."""
    episodes = {}
    for (speaker, month), texts in SMALL_TALK.items():
        for day, text in enumerate(texts, start=2):
            episodes[text] = say(cast.scope_a, text, speaker=speaker, when=at(2024, month, day), owner=cast.p_owner)
    episodes["recent"] = say(cast.scope_a, "Coffee with Sam this morning.", speaker="ankesh",
                             when=timezone.now() - timedelta(days=10), owner=cast.p_owner)
    episodes["important"] = say(cast.scope_a, "Grandma is in hospital.", speaker="ankesh", when=at(2024, 3, 20),
                                owner=cast.p_owner, importance=0.9)
    unscored = remember(scope=cast.scope_a, text="A note nobody read yet.", speaker="ankesh", occurred_at=at(2024, 3, 21),
                        actor=cast.p_owner, enqueue=False)
    episodes["unscored"] = Episode.objects.get(public_id=unscored.episodes[0].episode_id)
    assert episodes["unscored"].importance is None
    return episodes


def snapshot(scope=None) -> dict:
    """Every row consolidation could touch, in full."""
    def rows(model):
        qs = model.objects.all() if scope is None else model.objects.in_scope(scope)
        return sorted(qs.values_list(), key=str)
    return {"episodes": rows(Episode), "facts": rows(Fact), "mentions": rows(Mention),
            "audit": sorted(AuditEvent.objects.values_list("id", "action"))}


def call(*args) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # --json writes to sys.stdout
        call_command(*args, stdout=out)
    return out.getvalue()


def test_old_unimportant_episodes_become_one_summary_per_subject_and_month(cast, old_talk):
    facts_before = sorted(Fact.objects.values_list("pk", "source_episode_id", "status", "sentence"))
    receipt = consolidate(principal=cast.p_editor, scope=cast.scope_a)

    assert receipt.candidates == 7 and len(receipt.summaries) == 3 and receipt.consolidated == 7 and not receipt.failed
    summaries = Episode.objects.in_scope(cast.scope_a).filter(source=CONSOLIDATION_SOURCE).order_by("speaker", "occurred_at")
    assert [(s.speaker, s.occurred_at, s.consolidated_from.count()) for s in summaries] == [
        ("ankesh", at(2024, 3, 4), 3), ("ankesh", at(2024, 4, 3), 2), ("maya", at(2024, 3, 3), 2)]
    march = summaries[0]
    assert march.text.startswith("Summary of 3 messages from ankesh, March 2024: 2 Mar: We watched the lantern festival")
    assert "Rainy Sunday, stayed in with tea." in march.text and "Nothing else" not in march.text  # first sentences
    assert march.status == EpisodeStatus.DONE and march.importance == 0.1 and march.turn_id is None
    # Its originals point at it; the rest are left alone.
    for (speaker, month), texts in SMALL_TALK.items():
        for text in texts:
            old_talk[text].refresh_from_db()
            assert old_talk[text].consolidated_into.speaker == speaker and old_talk[text].consolidated_into.occurred_at.month == month
    for name in ("recent", "important", "unscored"):
        old_talk[name].refresh_from_db()
        assert old_talk[name].consolidated_into is None, name
    # Summaries are not extracted: no fact comes from them, and the facts keep their provenance.
    assert sorted(Fact.objects.values_list("pk", "source_episode_id", "status", "sentence")) == facts_before
    # The originals' mentions are the summary's too (erasing a person finds it).
    assert set(Mention.objects.filter(episode=march).values_list("entity__name", flat=True)) >= {"ankesh"}
    (event,) = AuditEvent.objects.filter(action="scope.consolidate")
    assert event.actor_user == cast.editor and event.after["summaries"] == 3 and event.after["episodes_consolidated"] == 7
    assert sorted(event.after["summary_ids"]) == sorted(str(s.public_id) for s in summaries)


def test_running_it_twice_changes_nothing_the_second_time(cast, old_talk):
    first = consolidate(principal=cast.p_editor, scope=cast.scope_a)
    assert len(first.summaries) == 3
    before = snapshot()
    second = consolidate(principal=cast.p_editor, scope=cast.scope_a)
    assert second.summaries == [] and second.batches == [] and second.candidates == 0
    assert snapshot() == before  # no row changed, no audit event


def test_a_dry_run_says_what_it_would_do_and_changes_nothing(cast, old_talk):
    before = snapshot()
    receipt = consolidate(principal=cast.p_viewer, scope=cast.scope_a, dry_run=True)  # reading is enough
    assert sorted((b.subject, b.period, len(b.episode_ids)) for b in receipt.batches) == [
        ("ankesh", "2024-03", 3), ("ankesh", "2024-04", 2), ("maya", "2024-03", 2)]
    assert receipt.summaries == []
    assert snapshot() == before


def test_another_scopes_episodes_are_untouched(cast, old_talk, say):
    for day in (2, 3):
        say(cast.scope_a2, f"Walked the dog along the canal, day {day}.", speaker="ankesh", when=at(2024, 3, day), owner=cast.p_owner)
    before = snapshot(cast.scope_a2)
    consolidate(principal=cast.p_owner, scope=cast.scope_a)
    assert snapshot(cast.scope_a2)["episodes"] == before["episodes"]
    assert consolidate(principal=cast.p_owner, scope=cast.scope_a2, dry_run=True).candidates == 2  # still there to take


def test_a_viewer_is_refused_and_an_outsider_finds_no_scope(cast, old_talk):
    before = snapshot()
    with pytest.raises(Forbidden):
        consolidate(principal=cast.p_viewer, scope=cast.scope_a)
    with pytest.raises(NotFound):
        consolidate(principal=cast.p_outsider, scope=cast.scope_a)
    with pytest.raises(NotFound):
        consolidate(principal=cast.p_outsider, scope=cast.scope_a, dry_run=True)
    assert snapshot() == before


def test_batches_hold_at_most_the_batch_size_split_evenly(cast, say, settings):
    settings.CONSOLIDATION_BATCH_SIZE = 3
    for day in range(1, 8):
        say(cast.scope_a, f"Small note number {day} about the weather.", speaker="ankesh", when=at(2024, 5, day), owner=cast.p_owner)
    receipt = consolidate(principal=cast.p_owner, scope=cast.scope_a)
    assert [s["episodes"] for s in receipt.summaries] == [3, 2, 2]
    assert Episode.objects.filter(consolidated_into__isnull=False).count() == 7


def test_recall_still_finds_an_originals_fact_and_the_original_after_it(cast, say):
    lisbon = say(cast.scope_a, "I live in Lisbon.", speaker="ankesh", when=at(2024, 3, 2), owner=cast.p_owner, importance=0.2)
    say(cast.scope_a, "We watched the lantern festival by the river.", speaker="ankesh", when=at(2024, 3, 9), owner=cast.p_owner)
    fact = Fact.objects.get(scope=cast.scope_a, attribute="lives_in")
    assert fact.source_episode_id == lisbon.pk

    receipt = consolidate(principal=cast.p_owner, scope=cast.scope_a)
    assert len(receipt.summaries) == 1
    index_pending(scope=cast.scope_a, full=True)
    lisbon.refresh_from_db()
    summary = lisbon.consolidated_into
    assert summary is not None

    fact.refresh_from_db()
    assert fact.source_episode_id == lisbon.pk  # provenance kept
    found = recall(scope=cast.scope_a, query="Where does ankesh live?", speaker="ankesh")
    facts = [i for i in found.items if i.kind == "fact"]
    assert facts and facts[0].id == str(fact.public_id) and facts[0].source["episode"] == str(lisbon.public_id)

    # The words are found in the summary and in the kept original; the summary is preferred.
    found = recall(scope=cast.scope_a, query="lantern festival river", filters={"kinds": ["episode"]})
    by_id = {i.id: i for i in found.items}
    assert str(summary.public_id) in by_id
    festival = Episode.objects.get(scope=cast.scope_a, text__startswith="We watched")
    assert str(festival.public_id) in by_id
    lifted = by_id[str(summary.public_id)]
    assert lifted.lanes["importance"] == pytest.approx(summary.importance + SUMMARY_PREFERENCE)
    assert "a summary of consolidated episodes" in lifted.why
    assert "condensed into a summary, kept" in by_id[str(festival.public_id)].why


def _model(replay_server, settings, provider, entries):  # noqa: F811
    server = replay_server(ollama=entries, openai=entries)
    server.configure(settings, provider)
    return server


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_the_language_model_writes_the_summary(cast, old_talk, replay_server, settings, provider):  # noqa: F811
    server = _model(replay_server, settings, provider, load_recordings("consolidation"))
    receipt = consolidate(principal=cast.p_owner, scope=cast.scope_a)
    assert not receipt.failed and len(receipt.summaries) == 3 and receipt.writer.startswith(provider)
    march = Episode.objects.get(scope=cast.scope_a, source=CONSOLIDATION_SOURCE, speaker="ankesh", occurred_at__month=3)
    assert march.text == ("Summary of 3 messages from ankesh, March 2024: ankesh watched the lantern festival by the river, "
                          "spent a rainy Sunday in, and found good rye bread at the bakery on Elm Street.")
    path = "/api/chat" if provider == "ollama" else "/v1/chat/completions"
    prompts = [body["messages"][1]["content"] for body in server.chats(path)]
    (asked,) = [p for p in prompts if p.startswith("Person: ankesh\nMonth: 2024-03")]
    assert "- [2024-03-02] We watched the lantern festival by the river." in asked
    assert "Rainy Sunday, stayed in with tea. Nothing else." in asked  # the whole text goes to the model
    assert "summary" in server.chats(path)[0]["messages"][0]["content"]  # the schema is in the system prompt


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_garbage_from_the_model_leaves_the_originals_untouched_and_says_so(cast, old_talk, replay_server, settings, provider):  # noqa: F811
    garbage = [{"match": "Person: ", "responses": [{"content": "Sure! Here is a summary: they did things."}]}]
    _model(replay_server, settings, provider, garbage)
    before = snapshot()
    receipt = consolidate(principal=cast.p_owner, scope=cast.scope_a)
    assert receipt.summaries == [] and len(receipt.failed) == 3 and receipt.not_tried == 0
    assert "invalid JSON 3 times" in receipt.failed[0]["error"]
    after = snapshot()
    assert after["episodes"] == before["episodes"] and after["mentions"] == before["mentions"]
    (event,) = AuditEvent.objects.filter(action="scope.consolidate")  # the failed run is on record
    assert event.after["summaries"] == 0 and len(event.after["failed"]) == 3

    with pytest.raises(CommandError, match=r"3 batch\(es\) failed and their episodes are untouched; .*invalid JSON"):
        call("consolidate", "--scope", "alpha", "--as", "owner")
    assert not Episode.objects.filter(source=CONSOLIDATION_SOURCE).exists()


def test_an_unreachable_model_stops_the_run_at_the_first_batch(cast, old_talk, replay_server, settings):  # noqa: F811
    _model(replay_server, settings, "ollama", [{"match": "Person: ", "responses": [{"status": 503, "error": "overloaded"}]}])
    receipt = consolidate(principal=cast.p_owner, scope=cast.scope_a)
    assert len(receipt.failed) == 1 and receipt.not_tried == 2 and "503" in receipt.failed[0]["error"]
    assert not Episode.objects.filter(consolidated_into__isnull=False).exists()


def test_the_command_shows_the_plan_then_does_it(cast, old_talk):
    out = call("consolidate", "--scope", "alpha", "--dry-run", "--as", "viewer")
    assert out.splitlines()[0].startswith("Would condense 7 of 7 old, unimportant episodes (happened before ")
    assert "importance below 0.3) of alpha into 3 summaries (writer: extractive (offline); nothing changed):" in out
    assert "  ankesh, 2024-03: 3 episodes" in out and "nothing changed" in out
    assert not Episode.objects.filter(source=CONSOLIDATION_SOURCE).exists()
    with pytest.raises(CommandError, match="You may not write scope 'alpha'"):
        call("consolidate", "--scope", "alpha", "--as", "viewer")

    data = json.loads(call("consolidate", "--scope", "alpha", "--json", "--as", "editor"))
    assert data["episodes_consolidated"] == 7 and len(data["summaries"]) == 3 and data["failed"] == []
    assert call("consolidate", "--scope", "alpha", "--as", "editor").startswith("Nothing to consolidate in alpha: 0 old, unimportant")


def test_the_nightly_task_consolidates_every_scope(cast, old_talk, say, settings):
    from memories.tasks import consolidate_scopes as task

    entry = settings.CELERY_BEAT_SCHEDULE["consolidate-scopes"]
    assert entry["task"] == task.name == "memories.consolidate_scopes"
    for day in (2, 3):
        say(cast.scope_b, f"Walked the dog along the canal, day {day}.", speaker="nora", when=at(2024, 3, day), owner=cast.p_outsider)
    totals = task.apply().get()
    assert totals["summaries"] == 4 and totals["episodes"] == 9 and totals["failed_scopes"] == []
    assert Episode.objects.filter(scope=cast.scope_b, source=CONSOLIDATION_SOURCE).count() == 1
    assert consolidate_scopes()["summaries"] == 0  # and again: nothing
    assert AuditEvent.objects.filter(action="scope.consolidate", actor_label="system").count() == 2


def test_a_backup_keeps_the_links_so_the_restored_copy_is_not_condensed_again(cast, old_talk):
    consolidate(principal=cast.p_owner, scope=cast.scope_a)
    out = io.BytesIO()
    scope_backup(principal=cast.p_owner, scope=cast.scope_a, out=out)
    scope_restore(principal=cast.p_owner, file=io.BytesIO(out.getvalue()), scope="copy", index=False)
    copy = Scope.objects.get(slug="copy")

    def links(scope):
        return sorted((e.text, e.consolidated_into.text if e.consolidated_into else None)
                      for e in Episode.objects.in_scope(scope).select_related("consolidated_into"))

    assert links(copy) == links(cast.scope_a)
    assert sum(1 for _, summary in links(copy) if summary) == 7
    assert consolidate(principal=cast.p_owner, scope=copy).batches == []


def test_forgetting_an_original_forgets_its_summary_and_the_rest_are_condensed_again(cast, old_talk):
    consolidate(principal=cast.p_owner, scope=cast.scope_a)
    lantern = old_talk["We watched the lantern festival by the river."]
    lantern.refresh_from_db()
    summary = lantern.consolidated_into
    receipt = episode_forget(principal=cast.p_owner, scope=cast.scope_a, episode_public_id=lantern.public_id)
    assert receipt.counts["episodes"] == 2
    assert not Episode.objects.filter(pk__in=[lantern.pk, summary.pk]).exists()
    assert not Episode.objects.filter(scope=cast.scope_a, text__contains="lantern").exists()
    rest = Episode.objects.filter(text__in=SMALL_TALK[("ankesh", 3)][1:])
    assert [e.consolidated_into_id for e in rest] == [None, None]

    again = consolidate(principal=cast.p_owner, scope=cast.scope_a)
    assert [(s["subject"], s["period"], s["episodes"]) for s in again.summaries] == [("ankesh", "2024-03", 2)]


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_condense_every_episode_once(cast, old_talk, replay_server, settings):  # noqa: F811
    """The model's first answer comes late, so one run writes while the other waits on it: each
    batch is written by exactly one of them, the other finds its episodes taken and skips it."""
    reply = {"content": {"summary": "They mentioned a few small things."}}
    _model(replay_server, settings, "ollama", [{"match": "Person: ", "by_request": True, "responses": [{"delay": 3, **reply}, reply]}])
    receipts, errors = [], []

    def run():
        try:
            receipts.append(consolidate(principal=cast.p_owner, scope=cast.scope_a))
        except Exception as exc:  # shown by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    other = threading.Thread(target=run)
    other.start()
    run()
    other.join()
    assert errors == [] and len(receipts) == 2
    assert sum(len(r.summaries) for r in receipts) == 3
    assert sum(len(r.summaries) + r.skipped for r in receipts) == 6  # every batch: written once, skipped once
    summaries = set(Episode.objects.filter(source=CONSOLIDATION_SOURCE).values_list("pk", flat=True))
    assert len(summaries) == 3
    linked = Episode.objects.filter(consolidated_into__isnull=False)
    assert linked.count() == 7 and set(linked.values_list("consolidated_into", flat=True)) == summaries
