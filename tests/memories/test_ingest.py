"""Raw ingest: validated first, committed first, idempotent, nothing written on bad input."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from accounts.permissions import Access
from memoryweb.errors import Forbidden, InvalidInput, NotFound, TooLarge
from memories.models import Embedding, Episode, EpisodeStatus, Session, Turn
from memories.scopes import scope_get
from memories.services.ingest import ingest_session, remember
from retrieval.models import SearchDocument

from .conftest import at


def _counts():
    return Session.objects.count(), Turn.objects.count(), Episode.objects.count()


def test_remember_commits_an_episode_without_a_turn_and_extracts_it(cast, committed):
    with committed():
        result = remember(scope=cast.scope_a, text="  I love playing football  ", speaker="ankesh", actor=cast.p_owner)
    episode = Episode.objects.get(public_id=result.episodes[0].episode_id)
    assert episode.text == "I love playing football"
    assert episode.turn is None and episode.session is None
    assert episode.author == cast.owner and episode.source == "cli"
    assert episode.status == EpisodeStatus.DONE  # no broker: extraction ran in-process after the commit
    assert Turn.objects.count() == 0
    # Searchable once committed: the episode is indexed, with a vector.
    document = SearchDocument.objects.get(collection="episode", target_id=episode.pk)
    assert Embedding.objects.filter(target_type="doc_episode", target_id=document.pk).exists()


def test_remember_with_a_session_appends_a_turn_to_it(cast, committed):
    with committed():
        ingest_session(scope=cast.scope_a, session_id="chat-1", messages=[{"id": "t1", "speaker": "a", "text": "hello"}], actor=None)
        result = remember(scope=cast.scope_a, text="a note", actor=cast.p_owner, session_id="chat-1")
    turns = list(Turn.objects.filter(session__external_id="chat-1").order_by("position"))
    assert [t.text for t in turns] == ["hello", "a note"]
    assert [t.position for t in turns] == [0, 1]
    assert Episode.objects.get(public_id=result.episodes[0].episode_id).turn == turns[1]


def test_remember_takes_dates_as_iso_strings_dates_or_datetimes_and_naive_means_utc(cast):
    r1 = remember(scope=cast.scope_a, text="one", occurred_at="2024-03-01", actor=None, enqueue=False)
    r2 = remember(scope=cast.scope_a, text="two", occurred_at="2024-03-01T09:30:00+02:00", actor=None, enqueue=False)
    r3 = remember(scope=cast.scope_a, text="three", occurred_at=datetime(2024, 3, 1, 9, 30), actor=None, enqueue=False)
    get = lambda r: Episode.objects.get(public_id=r.episodes[0].episode_id).occurred_at  # noqa: E731
    assert get(r1) == datetime(2024, 3, 1, tzinfo=UTC)
    assert get(r2) == datetime(2024, 3, 1, 7, 30, tzinfo=UTC)
    assert get(r3) == datetime(2024, 3, 1, 9, 30, tzinfo=UTC)


def test_a_slightly_fast_client_clock_is_tolerated(cast):
    result = remember(scope=cast.scope_a, text="now-ish", occurred_at=timezone.now() + timedelta(minutes=2), actor=None, enqueue=False)
    assert result.created == 1


def test_ingest_session_commits_one_turn_and_one_episode_per_message(cast, committed):
    messages = [
        {"id": "1", "speaker": "ankesh", "text": "I love playing football", "occurred_at": "2024-01-05T10:00:00Z"},
        {"id": "2", "speaker": "bot", "text": "Nice!", "occurred_at": "2024-01-05T10:00:05Z"},
    ]
    with committed():
        result = ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=cast.p_owner, source="api")
    assert result.created == 2 and result.skipped == 0 and result.session_id == "s1"
    turns = list(Turn.objects.filter(session__scope=cast.scope_a).order_by("position"))
    assert [(t.external_id, t.speaker, t.position) for t in turns] == [("1", "ankesh", 0), ("2", "bot", 1)]
    episodes = [Episode.objects.get(public_id=e.episode_id) for e in result.episodes]
    assert [e.turn for e in episodes] == turns
    assert all(e.status == EpisodeStatus.DONE and e.source == "api" for e in episodes)
    documents = SearchDocument.objects.filter(collection="turn", target_id__in=[t.pk for t in turns])
    assert documents.count() == 2
    assert Embedding.objects.filter(target_type="doc_turn", target_id__in=documents.values("pk")).count() == 2


def test_sending_the_same_session_again_changes_nothing_and_new_turns_are_appended(cast, committed):
    messages = [{"id": "1", "speaker": "a", "text": "first"}, {"id": "2", "speaker": "a", "text": "second"}]
    with committed():
        first = ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=None)
    before = _counts()
    with committed():
        again = ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=None)
    assert _counts() == before
    assert again.created == 0 and again.skipped == 2
    assert [e.episode_id for e in again.episodes] == [e.episode_id for e in first.episodes]

    changed = [{"id": "2", "speaker": "a", "text": "EDITED"}, {"id": "3", "speaker": "a", "text": "third"}]
    with committed():
        more = ingest_session(scope=cast.scope_a, session_id="s1", messages=changed, actor=None)
    assert [e.created for e in more.episodes] == [False, True]
    turns = list(Turn.objects.order_by("position").values_list("external_id", "text", "position"))
    assert turns == [("1", "first", 0), ("2", "second", 1), ("3", "third", 2)]  # turn 2 not updated


def test_the_same_session_id_in_another_scope_is_another_session(cast):
    messages = [{"id": "1", "text": "hi"}]
    ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=None, enqueue=False)
    result = ingest_session(scope=cast.scope_b, session_id="s1", messages=messages, actor=None, enqueue=False)
    assert result.created == 1
    assert Session.objects.filter(external_id="s1").count() == 2


@pytest.mark.parametrize(
    "text, error, message",
    [
        ("", InvalidInput, "Text is empty"),
        ("   \n ", InvalidInput, "Text is empty"),
        (None, InvalidInput, "must be a string"),
        ("nul\x00byte", InvalidInput, "NUL"),
        ("x" * 40_000, TooLarge, "limit is 32768 bytes"),
        ("é" * 16_385, TooLarge, "32770 bytes"),  # UTF-8 bytes count, not characters
    ],
)
def test_remember_refuses_bad_text_and_writes_nothing(cast, text, error, message):
    with pytest.raises(error, match=message):
        remember(scope=cast.scope_a, text=text, actor=cast.p_owner)
    assert _counts() == (0, 0, 0)


def test_the_size_limit_is_a_setting(cast, settings):
    settings.MEMORYWEB_MAX_TEXT_BYTES = 10
    with pytest.raises(TooLarge):
        remember(scope=cast.scope_a, text="eleven byte", actor=None)
    assert remember(scope=cast.scope_a, text="ten bytes!", actor=None, enqueue=False).created == 1


@pytest.mark.parametrize(
    "when, message",
    [
        ("yesterday-ish", "is not a date"),
        ("2024-13-45", "is not a date"),
        (20240101, "must be an ISO 8601 date string"),
        # Computed when the test runs, not when it is collected (a long suite outlasts the skew).
        (lambda: (timezone.now() + timedelta(days=2)).isoformat(), "is in the future"),
        (lambda: timezone.now() + timedelta(minutes=10), "is in the future"),
    ],
)
def test_remember_refuses_future_and_unparsable_dates_and_writes_nothing(cast, when, message):
    when = when() if callable(when) else when
    with pytest.raises(InvalidInput, match=message):
        remember(scope=cast.scope_a, text="hello", occurred_at=when, actor=None)
    assert _counts() == (0, 0, 0)


@pytest.mark.parametrize(
    "messages, message",
    [
        ([], "non-empty list of messages"),
        ("hello", "non-empty list of messages"),
        ([{"id": "1", "text": "a"}, {"id": "1", "text": "b"}], "Turn id '1' appears more than once"),
        ([{"id": "1", "text": "a"}, {"text": "no id"}], "Message 2 id is required"),
        ([{"id": "1", "text": "a"}, {"id": "2", "text": ""}], "Message '2' text is empty"),
        ([{"id": "1", "text": "a"}, {"id": "2", "text": "b", "occurred_at": "soon"}], "is not a date"),
        ([{"id": "1", "text": "a"}, {"id": "2", "text": "b", "occurred_at": "2999-01-01"}], "is in the future"),
        ([{"id": "1", "text": "a"}, "not an object"], "Message 2 must be an object"),
        ([{"id": True, "text": "a"}], "must be a string"),
    ],
)
def test_ingest_session_refuses_a_bad_request_and_writes_nothing(cast, messages, message):
    with pytest.raises(InvalidInput, match=message):
        ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=None)
    assert _counts() == (0, 0, 0)


def test_a_bad_message_in_a_known_session_adds_nothing_to_it(cast):
    ingest_session(scope=cast.scope_a, session_id="s1", messages=[{"id": "1", "text": "a"}], actor=None, enqueue=False)
    before = _counts()
    with pytest.raises(TooLarge):
        ingest_session(scope=cast.scope_a, session_id="s1", messages=[{"id": "2", "text": "ok"}, {"id": "3", "text": "x" * 40_000}], actor=None)
    assert _counts() == before


def test_ingest_session_requires_a_session_id(cast):
    with pytest.raises(InvalidInput, match="Session id is required"):
        ingest_session(scope=cast.scope_a, session_id="  ", messages=[{"id": "1", "text": "a"}], actor=None)


def test_an_unknown_or_foreign_scope_is_not_found_and_a_viewer_may_not_write(cast):
    with pytest.raises(NotFound, match="No scope named 'nope'"):
        scope_get(cast.p_owner, "nope", Access.WRITE)
    with pytest.raises(NotFound):
        scope_get(cast.p_outsider, "alpha", Access.WRITE)
    with pytest.raises(Forbidden):
        scope_get(cast.p_viewer, "alpha", Access.WRITE)


@pytest.mark.django_db(transaction=True)
def test_the_returned_status_is_read_after_the_commit_so_in_process_extraction_shows_done(cast):
    result = ingest_session(scope=cast.scope_a, session_id="s", messages=[{"id": "1", "speaker": "ankesh", "text": "I love tea"}],
                            actor=None)
    assert [e.status for e in result.episodes] == [EpisodeStatus.DONE]


def test_ingest_without_queueing_leaves_episodes_pending(cast, committed):
    with committed():
        result = remember(scope=cast.scope_a, text="I love tea", actor=None, occurred_at=at(2024, 1), enqueue=False)
    assert result.episodes[0].status == EpisodeStatus.PENDING


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("exists", [False, True], ids=["new session", "existing session"])
def test_two_ingests_racing_on_one_session_append_in_turn(cast, exists):
    """A session's creator holds it without a lock of its own until it commits (the other ingest
    waits on the unique constraint, then locks it); an existing session is locked: either way the
    second ingest appends after the first, never at the same positions."""
    import threading

    from django.db import connection

    if exists:
        ingest_session(scope=cast.scope_a, session_id="raced", actor=cast.p_owner, enqueue=False,
                       messages=[{"id": "first", "speaker": "c", "text": "the first turn"}])
    barrier, errors = threading.Barrier(2), []

    def send(prefix):
        try:
            barrier.wait()
            ingest_session(scope=cast.scope_a, session_id="raced", actor=cast.p_owner, enqueue=False,
                           messages=[{"id": f"{prefix}{i}", "speaker": prefix, "text": f"{prefix} says {i}"} for i in range(20)])
        except Exception as exc:  # reported below: a thread's exception would otherwise vanish
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(prefix,)) for prefix in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert Session.objects.filter(scope=cast.scope_a, external_id="raced").count() == 1
    turns = list(Turn.objects.filter(scope=cast.scope_a).order_by("position").values_list("position", "speaker"))
    start = int(exists)
    assert [p for p, _ in turns] == list(range(40 + start))
    speakers = [s for _, s in turns][start:]
    assert speakers[:20] in (["a"] * 20, ["b"] * 20) and len(set(speakers[20:])) == 1  # one after the other, not interleaved
