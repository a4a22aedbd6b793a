"""Healing in-process (no broker: what it queues runs eagerly): lost and stuck extractions,
missing entity vectors, a search index behind; idempotent; the `heal` command."""

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from memories.models import Embedding, EmbeddingTarget, Episode, EpisodeStatus, Fact
from memories.services.ingest import remember
from retrieval.heal import heal
from retrieval.models import SearchDocument

pytestmark = pytest.mark.django_db


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _lost(cast, text="I moved from San Francisco to New York", *, scope=None, minutes_ago=10) -> Episode:
    """An episode committed `pending` whose extraction message was never sent."""
    scope = scope or cast.scope_a
    actor = cast.p_outsider if scope == cast.scope_b else cast.p_owner
    result = remember(scope=scope, text=text, speaker="ankesh", occurred_at="2025-02-10", actor=actor, enqueue=False)
    episode = Episode.objects.get(public_id=result.episodes[0].episode_id)
    Episode.objects.filter(pk=episode.pk).update(ingested_at=timezone.now() - timedelta(minutes=minutes_ago))
    return episode


def _healed(committed, **kwargs) -> dict[str, int]:
    with committed():
        return heal(**kwargs).as_dict()


def test_an_episode_whose_message_was_lost_is_extracted_and_indexed(cast, committed):
    episode = _lost(cast)
    counts = _healed(committed)
    assert counts == {"pending_episodes": 1, "stale_episodes": 0, "entity_vectors": 0, "search_indexes": 1}
    episode.refresh_from_db()
    assert episode.status == EpisodeStatus.DONE and episode.attempts == 1
    assert {(f.value, f.status) for f in Fact.objects.filter(attribute="lives_in")} == {
        ("New York", "active"), ("San Francisco", "superseded")}
    assert SearchDocument.objects.filter(scope=cast.scope_a, collection="episode", target_id=episode.pk).exists()
    assert SearchDocument.objects.filter(scope=cast.scope_a, collection="fact").count() == 2


def test_heal_run_twice_does_nothing_the_second_time(cast, committed):
    _lost(cast)
    assert sum(_healed(committed).values()) > 0
    assert _healed(committed) == {"pending_episodes": 0, "stale_episodes": 0, "entity_vectors": 0, "search_indexes": 0}


def test_a_pending_episode_younger_than_the_heal_window_is_left_alone(cast, committed, settings):
    settings.MEMORYWEB_HEAL_PENDING_SECONDS = 300
    episode = _lost(cast, minutes_ago=1)
    assert _healed(committed)["pending_episodes"] == 0
    episode.refresh_from_db()
    assert episode.status == EpisodeStatus.PENDING


def test_a_requeued_episode_is_not_queued_again_while_its_message_may_still_wait(cast, settings, django_capture_on_commit_callbacks):
    episode = _lost(cast)
    with django_capture_on_commit_callbacks(execute=False) as sent:  # the broker holds the message
        assert heal().pending_episodes == 1
    assert len(sent) == 2  # the extraction, and the scope's index
    episode.refresh_from_db()
    assert episode.status == EpisodeStatus.PENDING and episode.claimed_at is not None
    with django_capture_on_commit_callbacks(execute=False):
        assert heal().pending_episodes == 0


def test_an_episode_stuck_in_processing_past_the_stale_window_is_requeued_and_completed(cast, committed, settings):
    stuck, live = _lost(cast), _lost(cast, "I love chess")
    long_ago = timezone.now() - timedelta(seconds=settings.MEMORYWEB_EXTRACT_STALE_SECONDS + 60)
    Episode.objects.filter(pk=stuck.pk).update(status=EpisodeStatus.PROCESSING, claim_id="dead-worker", claimed_at=long_ago, attempts=1)
    Episode.objects.filter(pk=live.pk).update(status=EpisodeStatus.PROCESSING, claim_id="live-worker", claimed_at=timezone.now(), attempts=1)
    counts = _healed(committed)
    assert (counts["pending_episodes"], counts["stale_episodes"]) == (0, 1)
    stuck.refresh_from_db()
    live.refresh_from_db()
    assert (stuck.status, stuck.attempts) == (EpisodeStatus.DONE, 2)
    assert (live.status, live.claim_id) == (EpisodeStatus.PROCESSING, "live-worker")  # a live claim is not touched


def test_missing_entity_vectors_are_backfilled(cast, committed):
    _lost(cast)
    _healed(committed)
    vectors = Embedding.objects.filter(scope=cast.scope_a, target_type=EmbeddingTarget.ENTITY)
    count = vectors.count()
    assert count >= 3  # ankesh, San Francisco, New York
    vectors.delete()  # as if storing them after the extraction's commit had failed
    assert _healed(committed)["entity_vectors"] == count
    assert vectors.count() == count


def test_heal_of_one_scope_leaves_the_others(cast, committed):
    mine, theirs = _lost(cast), _lost(cast, scope=cast.scope_b)
    assert _healed(committed, scope=cast.scope_a)["pending_episodes"] == 1
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.status, theirs.status) == (EpisodeStatus.DONE, EpisodeStatus.PENDING)


def test_heal_json_prints_the_counts_then_zeros(cast, capsys, django_capture_on_commit_callbacks):
    _lost(cast)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("heal", "--scope", "alpha", "--json", "--as", "owner")
    assert json.loads(capsys.readouterr().out) == {"pending_episodes": 1, "stale_episodes": 0, "entity_vectors": 0, "search_indexes": 1}
    with django_capture_on_commit_callbacks(execute=True):
        call_command("heal", "--as", "owner")
    assert capsys.readouterr().out.strip() == "Nothing to heal."


def test_heal_refuses_a_scope_the_user_cannot_write(cast):
    with pytest.raises(CommandError, match="bravo"):
        call_command("heal", "--scope", "bravo", "--as", "owner")  # another team's scope: not found
    with pytest.raises(CommandError):
        call_command("heal", "--scope", "alpha", "--as", "viewer")  # read-only: forbidden
