"""Extraction as a task: claimed once, safe to run twice, failures leave raw text intact and
the episode failed with a reason, and a retry reprocesses it. The model is scripted here."""

from datetime import UTC, datetime

import pytest
from celery.exceptions import Retry
from django.db import OperationalError, connection

from memoryweb.errors import Conflict, NotFound
from memoryweb.providers.llm import LLMError
from accounts.models import AuditEvent
from memories.extraction.schemas import ExtractedFact, Extraction, ReconcileDecision
from memories.models import Episode, EpisodeStatus, Fact, Mention, Turn
from memories.services.extract import TransientExtractionError, episode_claim, episode_extract, episode_retry
from memories.services.ingest import ingest_session, remember
from memories.tasks import MAX_RETRIES, extract_episode

from .conftest import at


def _likes(value, **kwargs):
    return ExtractedFact(subject="ankesh", attribute="likes", value=value, sentence=f"ankesh likes {value}.", **kwargs)


def _store(cast, committed, text="I love football", **kwargs):
    with committed():
        result = remember(scope=cast.scope_a, text=text, speaker="ankesh", occurred_at=at(2024, 1), actor=cast.p_owner, **kwargs)
    return Episode.objects.get(public_id=result.episodes[0].episode_id)


def test_a_model_error_marks_the_episode_failed_with_a_reason_and_keeps_the_raw_text(cast, committed, scripted_llm):
    scripted_llm.script = [LLMError("no valid JSON after 3 attempts: Expecting value at line 1")]
    with committed():
        result = ingest_session(scope=cast.scope_a, session_id="s", messages=[{"id": "1", "speaker": "ankesh", "text": "I love football"}],
                                actor=None)
    episode = Episode.objects.get(public_id=result.episodes[0].episode_id)
    assert episode.status == EpisodeStatus.FAILED
    assert episode.error == "The language model (scripted) failed: no valid JSON after 3 attempts: Expecting value at line 1"
    assert episode.text == "I love football" and Turn.objects.get().text == "I love football"
    assert episode.attempts == 1 and not Fact.objects.exists()


def test_garbage_that_does_not_fit_the_schema_fails_cleanly(cast, committed, scripted_llm):
    scripted_llm.script = [{"facts": [{"subject": "", "attribute": 7}], "importance": "very"}]
    episode = _store(cast, committed)
    assert episode.status == EpisodeStatus.FAILED
    assert episode.error.startswith("The language model (scripted) returned output that does not fit the schema")
    assert episode.text == "I love football"


def test_an_unexpected_error_fails_the_episode_with_its_name(cast, committed, scripted_llm):
    scripted_llm.script = [ZeroDivisionError("division by zero")]
    episode = _store(cast, committed)
    assert (episode.status, episode.error) == (EpisodeStatus.FAILED, "Extraction failed: ZeroDivisionError: division by zero")


def test_retry_reprocesses_a_failed_episode_and_is_audited(cast, committed, scripted_llm):
    scripted_llm.script = [LLMError("timed out after 60 s"), Extraction(facts=[_likes("football")])]
    episode = _store(cast, committed)
    assert episode.status == EpisodeStatus.FAILED
    with committed():
        episode_retry(scope=cast.scope_a, episode_public_id=episode.public_id, actor=cast.p_editor)
    retried = Episode.objects.get(pk=episode.pk)
    assert retried.status == EpisodeStatus.DONE and retried.error == "" and retried.attempts == 2
    assert list(Fact.objects.values_list("value", "status")) == [("football", "active")]
    event = AuditEvent.objects.get(action="episode.retry")
    assert event.actor_user == cast.editor and event.before["status"] == "failed" and event.after == {"status": "pending"}


def test_only_failed_or_pending_episodes_of_the_scope_can_be_retried(cast, committed, scripted_llm):
    episode = _store(cast, committed)
    assert episode.status == EpisodeStatus.DONE
    with pytest.raises(Conflict, match="is done"):
        episode_retry(scope=cast.scope_a, episode_public_id=episode.public_id, actor=cast.p_owner)
    with pytest.raises(NotFound):
        episode_retry(scope=cast.scope_b, episode_public_id=episode.public_id, actor=cast.p_outsider)
    with pytest.raises(NotFound):
        episode_retry(scope=cast.scope_a, episode_public_id="nonsense", actor=cast.p_owner)
    assert not AuditEvent.objects.exists()


def test_an_episode_with_nothing_extractable_is_done_with_no_facts(cast, committed, scripted_llm):
    scripted_llm.script = [Extraction(importance=0.1)]
    episode = _store(cast, committed, text="hello there")
    assert (episode.status, episode.error, episode.importance) == (EpisodeStatus.DONE, "", 0.1)
    assert not Fact.objects.exists()
    assert list(Mention.objects.values_list("entity__name", "role")) == [("ankesh", "actor")]


def test_a_claim_is_taken_once_but_a_redelivered_message_may_take_its_own_back(cast, settings):
    episode = Episode.objects.get(public_id=remember(scope=cast.scope_a, text="x", actor=None, enqueue=False).episodes[0].episode_id)
    assert episode_claim(episode_pk=episode.pk, claim_id="task-1")
    assert not episode_claim(episode_pk=episode.pk, claim_id="task-2")  # another live task holds it
    assert episode_claim(episode_pk=episode.pk, claim_id="task-1")  # the same message, redelivered
    episode.refresh_from_db()
    assert (episode.status, episode.claim_id, episode.attempts) == (EpisodeStatus.PROCESSING, "task-1", 2)
    settings.MEMORYWEB_EXTRACT_STALE_SECONDS = 1
    Episode.objects.filter(pk=episode.pk).update(claimed_at=at(2024, 1))
    assert episode_claim(episode_pk=episode.pk, claim_id="task-3")  # a stale claim: its worker is gone
    Episode.objects.filter(pk=episode.pk).update(status=EpisodeStatus.DONE)
    assert not episode_claim(episode_pk=episode.pk, claim_id="task-3")


def test_the_task_is_safe_to_run_twice(cast, committed, scripted_llm):
    scripted_llm.script = [Extraction(facts=[_likes("football")])]
    episode = _store(cast, committed)
    before = list(Fact.objects.values_list("pk", "status", "valid_to"))
    assert extract_episode.apply(args=[episode.pk]).get() == "skipped"
    assert list(Fact.objects.values_list("pk", "status", "valid_to")) == before
    assert len(scripted_llm.extract_calls) == 1


def test_extracting_an_episode_again_writes_nothing_new(cast, committed, scripted_llm):
    script = Extraction(facts=[_likes("football"), ExtractedFact(
        subject="ankesh", attribute="lives_in", value="New York", sentence="ankesh lives in New York.", previous_value="Boston")])
    scripted_llm.script = [script]
    episode = _store(cast, committed)
    before = sorted(Fact.objects.values_list("pk", "value", "status"))
    assert len(before) == 3  # football, New York, and Boston as history
    Episode.objects.filter(pk=episode.pk).update(status=EpisodeStatus.PENDING)  # as if the first run's ending was lost
    scripted_llm.script = [script]
    outcome = episode_extract(episode_pk=episode.pk)
    assert outcome.status == EpisodeStatus.DONE and {c.action for c in outcome.changes} == {"NOOP"}
    assert sorted(Fact.objects.values_list("pk", "value", "status")) == before


def test_in_process_a_transient_error_leaves_the_episode_failed_and_retryable(cast, committed, scripted_llm):
    scripted_llm.script = [OperationalError("server closed the connection unexpectedly"), Extraction(facts=[_likes("football")])]
    episode = _store(cast, committed)
    assert (episode.status, episode.attempts) == (EpisodeStatus.FAILED, 1)
    assert episode.error == "Temporary failure: OperationalError: server closed the connection unexpectedly"
    with committed():
        assert episode_retry(scope=cast.scope_a, episode_public_id=episode.public_id, actor=cast.p_owner).status == EpisodeStatus.PENDING
    episode.refresh_from_db()
    assert (episode.status, episode.error, episode.attempts) == (EpisodeStatus.DONE, "", 2)


@pytest.mark.parametrize("error", [OperationalError("could not connect to server"), LLMError("timed out after 60 s", retryable=True)])
def test_on_a_worker_a_transient_error_is_retried_later_with_backoff(cast, scripted_llm, monkeypatch, error):
    episode = Episode.objects.get(public_id=remember(scope=cast.scope_a, text="x", actor=None, enqueue=False).episodes[0].episode_id)
    scripted_llm.script = [error]
    scheduled = []

    def fake_retry(*, exc, countdown):
        scheduled.append((exc, countdown))
        return Retry(exc=exc, when=countdown)

    monkeypatch.setattr(extract_episode, "retry", fake_retry)
    extract_episode.push_request(id="task-1", is_eager=False, retries=2)
    try:
        with pytest.raises(Retry):
            extract_episode.run(episode.pk)
    finally:
        extract_episode.pop_request()
    (exc, countdown), = scheduled
    assert isinstance(exc, TransientExtractionError) and 20 <= countdown <= 40  # third attempt: 40 s, jittered
    episode.refresh_from_db()
    assert episode.status == EpisodeStatus.FAILED and episode.error.endswith(str(error))


def test_after_the_last_retry_the_episode_stays_failed(cast, scripted_llm):
    episode = Episode.objects.get(public_id=remember(scope=cast.scope_a, text="x", actor=None, enqueue=False).episodes[0].episode_id)
    scripted_llm.script = [OperationalError("could not connect to server")]
    extract_episode.push_request(id="task-1", is_eager=False, retries=MAX_RETRIES)
    try:
        with pytest.raises(TransientExtractionError):
            extract_episode.run(episode.pk)
    finally:
        extract_episode.pop_request()
    episode.refresh_from_db()
    assert (episode.status, episode.error) == (EpisodeStatus.FAILED, "Temporary failure: OperationalError: could not connect to server")


def test_a_model_that_returns_invalid_output_is_not_retried_by_the_task(cast, committed, scripted_llm):
    scripted_llm.script = [LLMError("no valid JSON after 3 attempts", retryable=False), Extraction()]
    episode = _store(cast, committed)
    assert (episode.status, episode.attempts) == (EpisodeStatus.FAILED, 1)
    assert len(scripted_llm.extract_calls) == 1


def test_with_a_language_model_it_decides_against_the_active_candidates(cast, committed, scripted_llm):
    scripted_llm.is_offline = False
    scripted_llm.script = [Extraction(facts=[_likes("football")]), Extraction(facts=[_likes("rugby")]),
                           Extraction(facts=[_likes("chess")])]
    football_episode = _store(cast, committed)
    assert scripted_llm.decide_calls == []  # nothing to weigh it against
    football = Fact.objects.get(value="football")
    scripted_llm.decisions = [lambda candidates: ReconcileDecision(action="UPDATE", target_fact_id=candidates[0]["id"], reason="switched")]
    _store(cast, committed, text="I prefer rugby now")
    assert scripted_llm.decide_calls[0]["candidates"] == [
        {"id": str(football.public_id), "attribute": "likes", "value": "football", "sentence": "ankesh likes football."}
    ]
    assert list(Fact.objects.filter(status="active").values_list("value", flat=True)) == ["rugby"]
    # A model that cannot decide leaves it to the rules (likes: add).
    scripted_llm.decisions = [LLMError("timed out")]
    _store(cast, committed, text="I like chess")
    assert sorted(Fact.objects.filter(status="active").values_list("value", flat=True)) == ["chess", "rugby"]
    assert football_episode.facts.get().status == "superseded"


def test_dates_from_the_model_are_made_aware_and_never_later_than_when_it_was_said(cast, committed, scripted_llm):
    scripted_llm.script = [Extraction(facts=[
        _likes("chess", valid_from=datetime(2023, 6, 1, 8, 0)),  # naive: UTC
        _likes("golf", valid_from=at(2031, 1)),  # after it was said: clamped
        _likes("tea"),  # no date: when it was said
    ])]
    _store(cast, committed)  # said at 2024-01-01 12:00 UTC
    assert dict(Fact.objects.values_list("value", "valid_from")) == {
        "chess": datetime(2023, 6, 1, 8, 0, tzinfo=UTC), "golf": at(2024, 1), "tea": at(2024, 1),
    }


@pytest.mark.django_db(transaction=True)
def test_the_model_is_called_outside_any_transaction(cast, scripted_llm):
    seen = []
    original = scripted_llm.extract

    def watching_extract(**kwargs):
        seen.append(connection.in_atomic_block)
        return original(**kwargs)

    scripted_llm.extract = watching_extract
    scripted_llm.script = [Extraction(facts=[_likes("football")])]
    result = remember(scope=cast.scope_a, text="I love football", speaker="ankesh", actor=None)
    assert result.episodes[0].status == EpisodeStatus.DONE
    assert seen == [False]


def test_facts_beyond_the_cap_are_dropped_and_counted(cast, committed, scripted_llm, settings, caplog):
    settings.MEMORYWEB_EXTRACT_MAX_FACTS = 3
    scripted_llm.is_offline = False  # a model's reply, not the offline rules (which cap at 25 themselves)
    scripted_llm.script = [Extraction(facts=[_likes(value) for value in ["chess", "tea", "golf", "jazz", "rain"]])]
    with caplog.at_level("WARNING", logger="memoryweb.extract"):
        episode = _store(cast, committed)
    assert (episode.status, episode.facts_dropped) == (EpisodeStatus.DONE, 2)
    assert sorted(Fact.objects.values_list("value", flat=True)) == ["chess", "golf", "tea"]  # the first three, as given
    assert "kept the first 3 of 5 extracted facts, dropped 2" in caplog.text

    Episode.objects.filter(pk=episode.pk).update(status=EpisodeStatus.PENDING)
    scripted_llm.script = [Extraction(facts=[_likes("chess")])]
    outcome = episode_extract(episode_pk=episode.pk)
    episode.refresh_from_db()
    assert (outcome.facts_dropped, episode.facts_dropped) == (0, 0)  # the count is the last extraction's
