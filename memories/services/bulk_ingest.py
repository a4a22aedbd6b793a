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

import uuid
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
            batch = new[start:start + COPY_BATCH]
            turn_pks = copy_rows(Turn, ("scope_id", "session_id", "external_id", "position", "speaker", "text", "occurred_at"), [
                (scope.pk, session_pk, m["id"], position, m["speaker"], m["text"], m["occurred_at"]) for session_pk, position, m in batch
            ])
            episode_pks += copy_rows(Episode, EPISODE_COLUMNS, [
                (scope.pk, session_pk, turn_pk, m["text"], m["speaker"], m["occurred_at"], now, source, author_id, EpisodeStatus.PENDING.value)
                for turn_pk, (session_pk, _, m) in zip(turn_pks, batch)
            ])
            if progress:
                progress(skipped + start + len(batch), total)

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


EPISODE_COLUMNS = ("scope_id", "session_id", "turn_id", "text", "speaker", "occurred_at", "ingested_at", "source", "author_id", "status")


def copy_rows(model: type[Model], names: tuple[str, ...], rows: list[tuple]) -> list[int]:
    """Write `rows` (values, ready for the database, of the fields whose attnames are `names`)
    into `model`'s table with COPY; returns their primary keys, drawn from the table's sequence
    first. Every other column gets its field's default as `Model()` would: a fresh one per row
    for a UUID (`uuid.uuid4`), the one value of this call for the rest (`timezone.now`, "", 0)."""
    if not rows:
        return []
    meta = model._meta
    given = set(names)
    others = [f for f in meta.concrete_fields if f.attname not in given and not f.primary_key]
    fixed = tuple(f.get_db_prep_save(f.get_default(), connection) for f in others if f.default is not uuid.uuid4)
    fresh = sum(1 for f in others if f.default is uuid.uuid4)
    column = {f.attname: f.column for f in meta.concrete_fields}
    columns = [meta.pk.column, *(column[n] for n in names),
               *(f.column for f in others if f.default is not uuid.uuid4), *(f.column for f in others if f.default is uuid.uuid4)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)", [meta.db_table, meta.pk.column, len(rows)])
        pks = [pk for (pk,) in cursor.fetchall()]
        quoted = ", ".join(connection.ops.quote_name(c) for c in columns)
        with cursor.cursor.copy(f"COPY {connection.ops.quote_name(meta.db_table)} ({quoted}) FROM STDIN") as copy:
            for pk, row in zip(pks, rows):
                copy.write_row((pk, *row, *fixed, *(uuid.uuid4() for _ in range(fresh))))
    return pks
