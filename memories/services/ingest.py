"""Raw input first: turns and episodes are committed, in one transaction, before anything else.

Everything is validated before the first write, so a bad request leaves nothing behind. After
the commit the scope's search index is queued to catch up (retrieval.index_scope, which embeds
the new texts in batches) and one extraction task per new episode is queued, both with
`transaction.on_commit` (eagerly run in-process without a broker).

`remember` stores one episode. Without `session_id` it has no Turn: the episode holds the raw
text itself. With `session_id` it also appends a Turn (with a generated id) to that session,
so a conversation's stored notes sit beside its messages.
"""

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from accounts.permissions import Access, Principal, require
from memoryweb.errors import InvalidInput, TooLarge
from memoryweb import queue
from memories.models import CONSOLIDATION_SOURCE, Episode, Scope, Session, Turn
from memories.services.indexing import queue_index
from memories.services.validation import clean_label as _clean_label

logger = logging.getLogger("memoryweb.ingest")

# A client clock may run a little ahead of ours; anything later than this is a bad date.
FUTURE_SKEW = timedelta(minutes=5)
# Names memoryweb writes itself, refused from callers (case-insensitively), so that nothing a caller
# stores passes for the system's own rows: the source of consolidation's summaries (which its
# writer sets directly, memories/services/consolidate.py), and the markers erasure leaves where
# text was (retrieval/forget.py: SCRUBBED, retrieval/erase.py: ERASED).
RESERVED_SOURCES = frozenset({CONSOLIDATION_SOURCE})
RESERVED_SPEAKERS = frozenset({CONSOLIDATION_SOURCE, "[forgotten]", "[erased]"})


@dataclass(frozen=True)
class IngestedEpisode:
    episode_id: uuid.UUID
    turn_id: str | None  # the caller's turn id, for sessions
    status: str
    created: bool  # False: the turn was sent before and was left as it was


@dataclass(frozen=True)
class IngestResult:
    episodes: list[IngestedEpisode]
    session_id: str | None = None

    @property
    def created(self) -> int:
        return sum(1 for e in self.episodes if e.created)

    @property
    def skipped(self) -> int:
        return len(self.episodes) - self.created

    def as_dict(self) -> dict:
        return {
            "session_id": self.session_id, "created": self.created, "skipped": self.skipped,
            "episodes": [
                {"episode_id": str(e.episode_id), "turn_id": e.turn_id, "status": e.status, "created": e.created}
                for e in self.episodes
            ],
        }


def remember(
    *, scope: Scope, text: str, speaker: str = "", occurred_at: datetime | date | str | None = None,
    actor: Principal | None, source: str = "cli", session_id: str | None = None, enqueue: bool = True,
) -> IngestResult:
    """Store one thing that was said or noted, then queue its extraction."""
    require(actor, scope, Access.WRITE)
    now = timezone.now()
    text = _clean_text(text, what="Text")
    speaker = _clean_label(speaker, what="Speaker", max_length=200)
    source = _not_reserved(_clean_label(source, what="Source", max_length=32, required=True), what="Source", reserved=RESERVED_SOURCES)
    speaker = _not_reserved(speaker, what="Speaker", reserved=RESERVED_SPEAKERS)
    when = parse_when(occurred_at, now=now, what="occurred_at") if _given(occurred_at) else now
    session_external = _clean_label(session_id, what="Session id", max_length=200) if session_id is not None else ""
    author = actor.user if actor else None

    with transaction.atomic():
        session = turn = None
        if session_external:
            session = _session_locked(scope=scope, external_id=session_external, started_at=when)
            turn = Turn.objects.create(
                scope=scope, session=session, external_id=uuid.uuid4().hex, position=_next_position(session),
                speaker=speaker, text=text, occurred_at=when,
            )
        episode = Episode.objects.create(
            scope=scope, session=session, turn=turn, text=text, speaker=speaker, occurred_at=when, source=source, author=author,
        )
    if enqueue:
        queue_index(scope)
        _enqueue([episode.pk])
    return _result([(episode, turn.external_id if turn else None, True)], session_id=session_external or None)


def ingest_session(
    *, scope: Scope, session_id: str, messages: list[dict], actor: Principal | None, source: str = "api", enqueue: bool = True,
) -> IngestResult:
    """Append a conversation's messages (`{"id", "speaker", "text", "occurred_at"?}`) to a session.

    Idempotent on (scope, session id, turn id): a turn sent before is skipped, not updated, so
    sending the same session twice changes nothing; new turns are appended in the given order.
    One episode per new turn.

    `enqueue=False` queues nothing after the commit (neither extraction nor search indexing):
    for bulk loaders (benchmarks, evaluation) that index and extract in their own time."""
    require(actor, scope, Access.WRITE)
    now = timezone.now()
    external_id = _clean_label(session_id, what="Session id", max_length=200, required=True)
    source = _not_reserved(_clean_label(source, what="Source", max_length=32, required=True), what="Source", reserved=RESERVED_SOURCES)
    cleaned = _clean_messages(messages, now=now)
    author = actor.user if actor else None

    with transaction.atomic():
        session = _session_locked(scope=scope, external_id=external_id, started_at=cleaned[0]["occurred_at"])
        known = {
            turn.external_id: turn
            for turn in Turn.objects.in_scope(scope).filter(session=session, external_id__in=[m["id"] for m in cleaned])
        }
        position = _next_position(session)
        new_turns = []
        for message in cleaned:
            if message["id"] in known:
                continue
            new_turns.append(Turn(
                scope=scope, session=session, external_id=message["id"], position=position, speaker=message["speaker"],
                text=message["text"], occurred_at=message["occurred_at"],
            ))
            position += 1
        Turn.objects.bulk_create(new_turns)
        new_episodes = Episode.objects.bulk_create([
            Episode(
                scope=scope, session=session, turn=turn, text=turn.text, speaker=turn.speaker, occurred_at=turn.occurred_at,
                source=source, author=author,
            )
            for turn in new_turns
        ])
        old_episodes = {e.turn_id: e for e in Episode.objects.in_scope(scope).filter(turn__in=list(known.values()))}

    if enqueue and new_turns:
        queue_index(scope)
    if enqueue:
        _enqueue([e.pk for e in new_episodes])
    by_turn_id = {turn.external_id: (episode, True) for turn, episode in zip(new_turns, new_episodes)}
    for turn_id, turn in known.items():
        by_turn_id[turn_id] = (old_episodes[turn.pk], False)
    rows = [(by_turn_id[m["id"]][0], m["id"], by_turn_id[m["id"]][1]) for m in cleaned]
    # Nothing ran after the commit without `enqueue`: the statuses in hand are the stored ones.
    return _result(rows, session_id=external_id, reread=enqueue)


def parse_when(value: datetime | date | str, *, now: datetime, what: str = "Date") -> datetime:
    """A datetime, a date or an ISO 8601 string; naive means UTC; not in the future."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, time.min)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInput(
                f"{what} {value!r} is not a date: use ISO 8601, like 2024-03-01 or 2024-03-01T09:30:00Z."
            ) from None
    else:
        raise InvalidInput(f"{what} must be an ISO 8601 date string, not {type(value).__name__}.")
    if timezone.is_naive(moment):
        moment = moment.replace(tzinfo=UTC)
    if moment > now + FUTURE_SKEW:
        raise InvalidInput(f"{what} {moment.isoformat()} is in the future.")
    return moment


def _given(value) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def _clean_text(text, *, what: str) -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be a string.")
    text = text.strip()
    if not text:
        raise InvalidInput(f"{what} is empty.")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} is not valid Unicode.") from None
    limit = settings.MEMORYWEB_MAX_TEXT_BYTES
    if size > limit:
        raise TooLarge(f"{what} is {size} bytes; the limit is {limit} bytes (MEMORYWEB_MAX_TEXT_BYTES).")
    if "\x00" in text:
        raise InvalidInput(f"{what} contains a NUL character.")
    return text


def _clean_messages(messages, *, now: datetime) -> list[dict]:
    if not isinstance(messages, list | tuple) or not messages:
        raise InvalidInput("A session needs a non-empty list of messages.")
    cleaned, seen = [], set()
    for number, message in enumerate(messages, start=1):
        if not isinstance(message, dict):
            raise InvalidInput(f"Message {number} must be an object with id, speaker and text.")
        turn_id = _clean_label(message.get("id"), what=f"Message {number} id", max_length=200, required=True)
        if turn_id in seen:
            raise InvalidInput(f"Turn id {turn_id!r} appears more than once in this request.")
        seen.add(turn_id)
        when = message.get("occurred_at")
        cleaned.append({
            "id": turn_id,
            "text": _clean_text(message.get("text"), what=f"Message {turn_id!r} text"),
            "speaker": _not_reserved(
                _clean_label(message.get("speaker"), what=f"Message {turn_id!r} speaker", max_length=200),
                what=f"Message {turn_id!r} speaker", reserved=RESERVED_SPEAKERS,
            ),
            "occurred_at": parse_when(when, now=now, what=f"Message {turn_id!r} occurred_at") if _given(when) else now,
        })
    return cleaned


def _not_reserved(value: str, *, what: str, reserved: frozenset[str]) -> str:
    if value.casefold() in reserved:
        raise InvalidInput(f"{what} {value!r} is reserved for memoryweb's own records: use another name.")
    return value


def _session_locked(*, scope: Scope, external_id: str, started_at: datetime) -> Session:
    """The session row, created if new and locked, so concurrent ingests of one session append
    in turn instead of racing for positions and turn ids. A session this transaction created
    needs no lock: until the commit nobody else sees it, and a concurrent creator waits on the
    unique constraint, then finds it and locks it."""
    session, created = Session.objects.get_or_create(scope=scope, external_id=external_id, defaults={"started_at": started_at})
    return session if created else Session.objects.select_for_update().get(pk=session.pk)


def _next_position(session: Session) -> int:
    last = Turn.objects.filter(session=session).aggregate(last=Max("position"))["last"]
    return 0 if last is None else last + 1


def _enqueue(episode_pks: list[int]) -> None:
    """Queue extraction once the raw rows are committed. A broker that is down leaves the episode
    pending (re-queued by the healing task, or retryable) instead of failing a call whose data is
    already saved."""
    for pk in episode_pks:
        queue.enqueue("memories.extract_episode", pk)


def _result(rows: list[tuple[Episode, str | None, bool]], *, session_id: str | None, reread: bool = True) -> IngestResult:
    # Re-read the statuses: run eagerly, extraction has finished by now.
    statuses = dict(Episode.objects.filter(pk__in=[e.pk for e, _, _ in rows]).values_list("pk", "status")) if reread else {}
    return IngestResult(
        episodes=[IngestedEpisode(episode_id=e.public_id, turn_id=t, status=statuses.get(e.pk, e.status), created=c) for e, t, c in rows],
        session_id=session_id,
    )
