"""Raw bulk ingest: many sessions in one transaction, the turns and episodes written with COPY.

`ingest_sessions_bulk` is `ingest_session` for a file of sessions (`memoryweb ingest`, the
benchmarks' builds): every session is validated first, with the same rules (`_clean_messages`),
and a bad one is refused by its number with nothing written; then, in ONE transaction, the
sessions are created (or found and locked, as `ingest_session` locks them), the turns sent before
are skipped (idempotent on scope, session id and turn id), and the new turns and their episodes
go in through PostgreSQL's COPY (psycopg 3's `cursor.copy`), their primary keys drawn from the
tables' sequences beforehand so that an episode can name its turn without reading it back.
Extraction and indexing are queued after the commit, as `ingest_session` queues them.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from accounts.permissions import Access, Principal, require
from memoryweb.errors import InvalidInput
from memories.models import Episode, EpisodeStatus, Scope, Session, Turn
from memories.services.indexing import queue_index
from memories.services.ingest import _clean_messages, _enqueue
from memories.services.validation import clean_label

# Turns built and written per COPY (the model instances of one batch only are held at once).
COPY_BATCH = 20_000


class BulkInvalid(InvalidInput):
    """A session of the batch is refused: `number` is the caller's number for it (a line)."""

    def __init__(self, number: int, message: str):
        super().__init__(message)
        self.number = number


@dataclass(frozen=True)
class BulkResult:
    sessions: int
    created: int
    skipped: int


def ingest_sessions_bulk(
    *, scope: Scope, sessions: Iterable[tuple[int, dict]], actor: Principal | None, source: str = "cli", enqueue: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> BulkResult:
    """Store `sessions`, (number, `{"session_id", "messages"}`) pairs, all or nothing.

    Raises `BulkInvalid` naming the first bad session's number before anything is written.
    `enqueue=False` queues neither extraction nor indexing (benchmarks index in their own time).
    `progress(done, total)` is called as turns are written (skipped ones count as done)."""
    require(actor, scope, Access.WRITE)
    now = timezone.now()
    source = clean_label(source, what="Source", max_length=32, required=True)
    cleaned: dict[str, list[dict]] = {}  # session id -> messages, in file order; a session may span lines
    for number, body in sessions:
        try:
            session_id = clean_label(body.get("session_id"), what="Session id", max_length=200, required=True)
            messages = _clean_messages(body.get("messages"), now=now)
        except InvalidInput as exc:
            raise BulkInvalid(number, exc.message) from None
        known = cleaned.setdefault(session_id, [])
        seen = {m["id"] for m in known}
        known.extend(m for m in messages if m["id"] not in seen)
    total = sum(len(m) for m in cleaned.values())
    author_id = actor.user.pk if actor and actor.user else None

    with transaction.atomic():
        by_id = _sessions_locked(scope, cleaned)
        # The turns stored before (a re-run, or a session continued): skipped, and appended after.
        stored, last = _stored_turns(scope, [s.pk for s in by_id.values()])
        new: list[tuple[int, int, dict]] = []  # (session pk, position, message): light until its batch is written
        for external_id, messages in cleaned.items():
            session = by_id[external_id]
            position = last.get(session.pk, -1) + 1
            for message in messages:
                if (session.pk, message["id"]) not in stored:
                    new.append((session.pk, position, message))
                    position += 1
        skipped = total - len(new)
        if progress:
            progress(skipped, total)
        episode_pks: list[int] = []
        for start in range(0, len(new), COPY_BATCH):
            turns = [
                Turn(
                    scope_id=scope.pk, session_id=session_pk, external_id=m["id"], position=position, speaker=m["speaker"],
                    text=m["text"], occurred_at=m["occurred_at"], created_at=now,
                )
                for session_pk, position, m in new[start:start + COPY_BATCH]
            ]
            copy_rows(Turn, turns)
            episodes = [
                Episode(
                    scope_id=scope.pk, session_id=t.session_id, turn_id=t.pk, text=t.text, speaker=t.speaker,
                    occurred_at=t.occurred_at, ingested_at=now, source=source, author_id=author_id, status=EpisodeStatus.PENDING,
                )
                for t in turns
            ]
            copy_rows(Episode, episodes)
            episode_pks.extend(e.pk for e in episodes)
            if progress:
                progress(skipped + start + len(turns), total)

    if enqueue and new:
        queue_index(scope)
        _enqueue(episode_pks)
    return BulkResult(sessions=len(cleaned), created=len(new), skipped=skipped)


def _sessions_locked(scope: Scope, cleaned: dict[str, list[dict]]) -> dict[str, Session]:
    """The batch's sessions by external id, the new ones created, all of them locked (FOR UPDATE,
    as `ingest_session` locks one) so concurrent ingests of a session append in turn."""
    fresh = [Session(scope=scope, external_id=external_id, started_at=messages[0]["occurred_at"]) for external_id, messages in cleaned.items()]
    # Those that exist, or that a concurrent ingest creates meanwhile, are conflicts left alone.
    Session.objects.bulk_create(fresh, batch_size=5000, ignore_conflicts=True)
    return {s.external_id: s for s in Session.objects.in_scope(scope).filter(external_id__in=list(cleaned)).select_for_update()}


def _stored_turns(scope: Scope, session_pks: list[int]) -> tuple[set[tuple[int, str]], dict[int, int]]:
    """(session pk, turn id) of the turns these sessions hold, and each session's last position."""
    stored, last = set(), {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT session_id, external_id, position FROM memories_turn WHERE scope_id = %s AND session_id = ANY(%s)",
            [scope.pk, session_pks],
        )
        for session_pk, external_id, position in cursor.fetchall():
            stored.add((session_pk, external_id))
            last[session_pk] = max(position, last.get(session_pk, -1))
    return stored, last


def copy_rows(model: type[Model], objs: list[Model]) -> None:
    """Write `objs` (new, unsaved) with COPY, every concrete column; their primary keys are drawn
    from the table's sequence first and set on them, as `bulk_create` would return them."""
    if not objs:
        return
    table, pk = model._meta.db_table, model._meta.pk
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)", [table, pk.column, len(objs)]
        )
        for obj, (value,) in zip(objs, cursor.fetchall()):
            obj.pk = value
        fields = [f for f in model._meta.concrete_fields]
        columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        with cursor.cursor.copy(f"COPY {connection.ops.quote_name(table)} ({columns}) FROM STDIN") as copy:
            for obj in objs:
                copy.write_row([f.get_db_prep_save(getattr(obj, f.attname), connection) for f in fields])

