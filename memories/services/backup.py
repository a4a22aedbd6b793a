"""The rows of a scope backup: writing them as JSON Lines records, and reading them back into a scope.

The file format is docs/BACKUP-FORMAT.md. This module knows the memory rows (sessions, turns,
episodes, entities, aliases, facts, fact supports, mentions, audit events, entity vectors);
`retrieval.backup` is the service every door calls: it authorises, audits, adds the search
documents' vectors and rebuilds the search index after a restore, which memories cannot reach.

Rows are referenced by their public ids, never by primary keys. Rows without a public id (aliases,
supports, mentions, vectors) are never referenced, so they need none. Both directions stream:
writing reads the tables in chunks, reading inserts in batches inside the caller's transaction,
so a corrupt line anywhere rolls everything back.
"""

import base64
import gzip
import hashlib
import json
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import connection

from accounts.models import AuditEvent, User
from memoryweb.errors import InvalidInput
from memories.models import (
    Embedding, EmbeddingTarget, Entity, EntityAlias, Episode, EpisodeStatus, Fact, FactStatus, FactSupport, Mention, MergeProposal,
    ProposalKind, ProposalStatus, Scope, Session, Tombstone, TombstoneKind, Turn,
)
from memories.services.vectors import ensure_model_index

FORMAT = "memoryweb-scope-backup"
VERSION = 2  # 2 added the proposal and tombstone sections
READS = (1, 2)
# The sections, in the order they appear: every reference points to an earlier section (or, for
# merged_into, supersedes and consolidated_into, to the same one), so a reader can resolve it when it gets there.
KINDS = ("session", "turn", "episode", "entity", "alias", "fact", "support", "mention", "proposal", "audit", "tombstone", "vector")
_CHUNK = 2000
_BATCH = 1000

Progress = Callable[[int, int], None]  # called with (rows done, rows in all), every thousand rows or so


class Ticker:
    """Counts rows done and tells `progress` now and then (a terminal's progress bar)."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.done, self._told = progress, total, 0, 0

    def __call__(self, n: int = 1) -> None:
        self.done += n
        if self.progress is not None and (self.done - self._told >= _BATCH or self.done >= self.total):
            self.progress(self.done, self.total)
            self._told = self.done


def text_digest(text: str) -> str:
    """How a search document's vector is keyed in a backup: the SHA-1 of the text it embeds."""
    return hashlib.sha1(text.encode()).hexdigest()


def vector_encode(vec) -> str:
    """A vector as base64 of little-endian float32 (pgvector stores float4: no precision lost)."""
    return base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode("ascii")


def vector_decode(data: bytes) -> list[float]:
    return np.frombuffer(data, dtype="<f4").tolist()


# ---------------------------------------------------------------- writing


def backup_counts(scope: Scope, *, with_vectors: bool, model: str) -> dict[str, int]:
    """How many records of each kind `backup_records` yields (vectors: the entity vectors only)."""
    return {
        "session": Session.objects.in_scope(scope).count(),
        "turn": Turn.objects.in_scope(scope).count(),
        "episode": Episode.objects.in_scope(scope).count(),
        "entity": Entity.objects.in_scope(scope).count(),
        "alias": EntityAlias.objects.in_scope(scope).count(),
        "fact": Fact.objects.in_scope(scope).count(),
        "support": FactSupport.objects.in_scope(scope).count(),
        "mention": Mention.objects.in_scope(scope).count(),
        "proposal": MergeProposal.objects.in_scope(scope).count(),
        "audit": AuditEvent.objects.filter(scope=scope).count(),
        "tombstone": Tombstone.objects.in_scope(scope).count(),
        "vector": _entity_vectors(scope, model).count() if with_vectors else 0,
    }


def _entity_vectors(scope: Scope, model: str):
    return Embedding.objects.filter(scope=scope, model=model, target_type=EmbeddingTarget.ENTITY)


def _rows(queryset, *fields: str) -> Iterator[dict]:
    """The rows as dicts, read in chunks through a server-side cursor (never all at once)."""
    return queryset.order_by("id").values(*fields).iterator(chunk_size=_CHUNK)


def _uuid(value) -> str | None:
    return str(value) if value is not None else None


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def backup_records(scope: Scope, *, with_vectors: bool, model: str) -> Iterator[dict]:
    """Every row of `scope` as one record, section by section (KINDS' order)."""
    for r in _rows(Session.objects.in_scope(scope), "public_id", "external_id", "started_at", "created_at"):
        yield {"kind": "session", "id": str(r["public_id"]), "external_id": r["external_id"],
               "started_at": _time(r["started_at"]), "created_at": _time(r["created_at"])}
    for r in _rows(Turn.objects.in_scope(scope), "public_id", "session__public_id", "external_id", "position", "speaker",
                   "text", "occurred_at", "created_at"):
        yield {"kind": "turn", "id": str(r["public_id"]), "session": str(r["session__public_id"]),
               "external_id": r["external_id"], "position": r["position"], "speaker": r["speaker"], "text": r["text"],
               "occurred_at": _time(r["occurred_at"]), "created_at": _time(r["created_at"])}
    for r in _rows(Episode.objects.in_scope(scope), "public_id", "session__public_id", "turn__public_id", "text", "speaker",
                   "occurred_at", "ingested_at", "importance", "location", "source", "author__public_id", "status",
                   "error", "attempts", "processed_at", "facts_dropped", "consolidated_into__public_id"):
        yield {"kind": "episode", "id": str(r["public_id"]), "session": _uuid(r["session__public_id"]),
               "turn": _uuid(r["turn__public_id"]), "text": r["text"], "speaker": r["speaker"],
               "occurred_at": _time(r["occurred_at"]), "ingested_at": _time(r["ingested_at"]),
               "importance": r["importance"], "location": r["location"], "source": r["source"],
               "author": _uuid(r["author__public_id"]), "status": r["status"], "error": r["error"],
               "attempts": r["attempts"], "processed_at": _time(r["processed_at"]), "facts_dropped": r["facts_dropped"],
               "consolidated_into": _uuid(r["consolidated_into__public_id"])}
    for r in _rows(Entity.objects.in_scope(scope), "public_id", "name", "kind", "merged_into__public_id", "created_at"):
        yield {"kind": "entity", "id": str(r["public_id"]), "name": r["name"], "entity_kind": r["kind"],
               "merged_into": _uuid(r["merged_into__public_id"]), "created_at": _time(r["created_at"])}
    for r in _rows(EntityAlias.objects.in_scope(scope), "entity__public_id", "alias", "normalized", "created_at"):
        yield {"kind": "alias", "entity": str(r["entity__public_id"]), "alias": r["alias"], "normalized": r["normalized"],
               "created_at": _time(r["created_at"])}
    for r in _rows(Fact.objects.in_scope(scope), "public_id", "subject__public_id", "attribute", "value", "value_normalized",
                   "object_entity__public_id", "sentence", "valid_from", "valid_to", "status", "supersedes__public_id",
                   "source_episode__public_id", "confidence", "importance", "provenance", "author__public_id", "created_at"):
        yield {"kind": "fact", "id": str(r["public_id"]), "subject": str(r["subject__public_id"]),
               "attribute": r["attribute"], "value": r["value"], "value_normalized": r["value_normalized"],
               "object_entity": _uuid(r["object_entity__public_id"]), "sentence": r["sentence"],
               "valid_from": _time(r["valid_from"]), "valid_to": _time(r["valid_to"]), "status": r["status"],
               "supersedes": _uuid(r["supersedes__public_id"]), "source_episode": _uuid(r["source_episode__public_id"]),
               "confidence": r["confidence"], "importance": r["importance"], "provenance": r["provenance"],
               "author": _uuid(r["author__public_id"]), "created_at": _time(r["created_at"])}
    for r in _rows(FactSupport.objects.in_scope(scope), "fact__public_id", "episode__public_id", "sentence", "valid_from",
                   "created_at"):
        yield {"kind": "support", "fact": str(r["fact__public_id"]), "episode": str(r["episode__public_id"]),
               "sentence": r["sentence"], "valid_from": _time(r["valid_from"]), "created_at": _time(r["created_at"])}
    for r in _rows(Mention.objects.in_scope(scope), "episode__public_id", "entity__public_id", "role"):
        yield {"kind": "mention", "episode": str(r["episode__public_id"]), "entity": str(r["entity__public_id"]), "role": r["role"]}
    for r in _rows(MergeProposal.objects.in_scope(scope), "public_id", "source__public_id", "target__public_id", "kind", "score",
                   "evidence", "status", "created_at", "decided_at", "decided_by"):
        yield {"kind": "proposal", "id": str(r["public_id"]), "source": str(r["source__public_id"]),
               "target": str(r["target__public_id"]), "proposal_kind": r["kind"], "score": r["score"], "evidence": r["evidence"],
               "status": r["status"], "created_at": _time(r["created_at"]), "decided_at": _time(r["decided_at"]),
               "decided_by": r["decided_by"]}
    for r in _rows(AuditEvent.objects.filter(scope=scope), "public_id", "actor_user__public_id", "actor_label", "action",
                   "target_type", "target_id", "before", "after", "created_at"):
        yield {"kind": "audit", "id": str(r["public_id"]), "actor_user": _uuid(r["actor_user__public_id"]),
               "actor_label": r["actor_label"], "action": r["action"], "target_type": r["target_type"],
               "target_id": r["target_id"], "before": r["before"], "after": r["after"], "created_at": _time(r["created_at"])}
    # Tombstones hold digests only (memories/services/tombstones.py): a restore of this file on a
    # fresh database still erases again what a backup taken before the erasure brings back.
    for r in _rows(Tombstone.objects.in_scope(scope), "public_id", "origin", "kind", "erased_at", "erased_by", "key_id",
                   "episodes", "turns", "texts", "names"):
        yield {"kind": "tombstone", "id": str(r["public_id"]), "origin": str(r["origin"]), "erasure_kind": r["kind"],
               "erased_at": _time(r["erased_at"]), "erased_by": r["erased_by"], "key_id": r["key_id"],
               "episodes": r["episodes"], "turns": r["turns"], "texts": r["texts"], "names": r["names"]}
    if with_vectors:
        yield from _entity_vector_records(scope, model)


def _entity_vector_records(scope: Scope, model: str) -> Iterator[dict]:
    # float4[] comes back as a list of floats; a server-side cursor keeps memory flat.
    with connection.chunked_cursor() as cursor:
        cursor.execute(
            "SELECT en.public_id, e.vec::float4[] FROM retrieval_embedding e JOIN memories_entity en ON en.id = e.target_id"
            " WHERE e.scope_id = %s AND e.model = %s AND e.target_type = %s ORDER BY e.id",
            [scope.pk, model, EmbeddingTarget.ENTITY],
        )
        for public_id, vec in cursor:
            yield {"kind": "vector", "target": EmbeddingTarget.ENTITY, "entity": str(public_id), "vec": vector_encode(vec)}


# ---------------------------------------------------------------- reading


def backup_lines(file) -> Iterator[tuple[int, dict]]:
    """(line number, record) for each line of a gzip'd JSON Lines file; a bad gzip stream, a
    truncated one, a line that is not a JSON object: InvalidInput naming the line."""
    line_no = 0
    try:
        with gzip.GzipFile(fileobj=file, mode="rb") as stream:
            for line_no, raw in enumerate(stream, start=1):
                try:
                    record = json.loads(raw)
                except (ValueError, UnicodeDecodeError):
                    raise InvalidInput(f"Line {line_no}: not valid JSON.") from None
                if not isinstance(record, dict):
                    raise InvalidInput(f"Line {line_no}: not a JSON object.")
                yield line_no, record
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, EOFError) or "end-of-stream" in str(exc):
            raise InvalidInput(f"The file ends early, after line {line_no}: it is truncated.") from None
        raise InvalidInput(f"Line {line_no + 1}: not a gzip'd memoryweb backup ({exc}).") from None


def header_check(line_no: int, record: dict) -> dict:
    if record.get("format") != FORMAT:
        raise InvalidInput(f"Line {line_no}: not a memoryweb scope backup (no {FORMAT!r} header).")
    if record.get("version") not in READS:
        raise InvalidInput(
            f"Line {line_no}: backup format version {record.get('version')!r} is not known"
            f" (this memoryweb reads {', '.join(map(str, READS))})."
        )
    counts = record.get("counts")
    if not isinstance(counts, dict) or any(not isinstance(counts.get(k, 0), int) for k in KINDS):
        raise InvalidInput(f"Line {line_no}: the header's counts are missing or malformed.")
    if not isinstance(record.get("scope"), dict) or not isinstance(record["scope"].get("slug"), str):
        raise InvalidInput(f"Line {line_no}: the header does not name its scope.")
    return record


class _Line:
    """Field access for one record, refusing a missing or mistyped field with the line number."""

    def __init__(self, line_no: int, record: dict):
        self.no, self.record = line_no, record

    def fail(self, message: str):
        raise InvalidInput(f"Line {self.no}: {message}")

    def text(self, name: str, *, blank: bool = True, optional: bool = False) -> str | None:
        value = self.record.get(name)
        if value is None and optional:
            return None
        if not isinstance(value, str) or (not blank and not value):
            self.fail(f"{self.record.get('kind')} needs {name!r} as {'non-empty ' if not blank else ''}text.")
        return value

    def public_id(self, name: str, *, optional: bool = False) -> uuid.UUID | None:
        value = self.record.get(name)
        if value is None and optional:
            return None
        try:
            return uuid.UUID(value)
        except (TypeError, ValueError, AttributeError):
            self.fail(f"{self.record.get('kind')} needs {name!r} as an id (UUID), not {value!r}.")

    def time(self, name: str, *, optional: bool = False) -> datetime | None:
        value = self.record.get(name)
        if value is None and optional:
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except (TypeError, ValueError):
            self.fail(f"{self.record.get('kind')} needs {name!r} as an ISO date and time, not {value!r}.")
        if parsed.tzinfo is None:
            self.fail(f"{name!r} has no time zone.")
        return parsed

    def number(self, name: str, *, optional: bool = False, whole: bool = False) -> float | int | None:
        value = self.record.get(name)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
            self.fail(f"{self.record.get('kind')} needs {name!r} as a {'whole ' if whole else ''}number, not {value!r}.")
        return value

    def choice(self, name: str, choices) -> str:
        value = self.record.get(name)
        if value not in {c.value for c in choices}:
            self.fail(f"{name!r} must be one of {', '.join(c.value for c in choices)}, not {value!r}.")
        return value


@dataclass
class RowsLoaded:
    """What `backup_load` wrote: rows by kind, rows a merge found present already (skipped), rows
    whose public id was taken by another scope (given a new one), and the search documents'
    vectors (text digest → float32 bytes) for the indexer to reuse."""

    written: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    renewed_ids: int = 0
    doc_vectors: dict[str, bytes] = field(default_factory=dict)
    pending_episodes: list[int] = field(default_factory=list)


class _Loader:
    """Inserts one file's records into `scope`, batch by batch, keeping the file id → primary key maps."""

    def __init__(self, *, scope: Scope, header: dict, merge: bool, model: str, progress: Progress | None):
        self.scope, self.merge = scope, merge
        self.tick = Ticker(progress, sum(header["counts"].get(kind, 0) for kind in KINDS))
        self.reuse_vectors = header.get("embedding_model") == model
        self.model = model
        self.loaded = RowsLoaded()
        self.pks: dict[str, dict[uuid.UUID, int]] = {
            kind: {} for kind in ("session", "turn", "episode", "entity", "fact", "proposal", "audit")
        }
        self.tombstones = set(Tombstone.objects.in_scope(scope).values_list("public_id", flat=True))
        self.renamed: dict[str, str] = {str(header["scope"].get("id")): str(scope.public_id)}
        self.users: dict[uuid.UUID, int | None] = {}
        # Self-references (merged_into, supersedes, consolidated_into) by kind: (own id, referenced id, line), linked in `finish`.
        self.deferred: dict[str, list[tuple[uuid.UUID, uuid.UUID, int]]] = {"entity": [], "fact": [], "episode": []}
        self.seen = dict.fromkeys(KINDS, 0)
        self.batch: list[tuple[int, object, uuid.UUID | None]] = []
        self.kind: str | None = None
        self.present = _Present(scope) if merge else None

    # Each record kind: parse, decide (skip when present), then buffer the model instance.
    def add(self, line_no: int, record: dict) -> None:
        line = _Line(line_no, record)
        kind = record.get("kind")
        if kind not in KINDS:
            line.fail(f"unknown record kind {kind!r}.")
        if self.kind != kind:
            if self.kind is not None and KINDS.index(kind) < KINDS.index(self.kind):
                line.fail(f"a {kind} after the {self.kind}s: the sections are out of order.")
            self.flush()
            self.kind = kind
        self.seen[kind] += 1
        getattr(self, f"_{kind}")(line)
        if len(self.batch) >= _BATCH:
            self.flush()

    def ref(self, line: _Line, kind: str, name: str, *, optional: bool = False) -> int | None:
        public_id = line.public_id(name, optional=optional)
        if public_id is None:
            return None
        pk = self.pks[kind].get(public_id)
        if pk is None:
            line.fail(f"{name!r} refers to {kind} {public_id}, which is not in the file (before this line).")
        return pk

    def user(self, line: _Line, name: str) -> int | None:
        public_id = line.public_id(name, optional=True)
        if public_id is None:
            return None
        if public_id not in self.users:  # linked only when that user exists in this database
            self.users[public_id] = User.objects.filter(public_id=public_id).values_list("pk", flat=True).first()
        return self.users[public_id]

    def found(self, kind: str, key) -> int | None:
        """In a merge, the target's row with this identifying key (docs/BACKUP-FORMAT.md, "Merge")."""
        return self.present.keys[kind].get(key) if self.present is not None and key is not None else None

    def keep(self, kind: str, public_id: uuid.UUID, existing_pk: int | None = None) -> bool:
        """Whether to insert this row: False (and the id mapped to it) when a merge finds it present."""
        if existing_pk is None and self.present is not None:
            existing_pk = self.present.ids[kind].get(public_id)
        if existing_pk is not None:
            self.pks[kind][public_id] = existing_pk
            self.loaded.skipped[kind] += 1
            self.tick()
            return False
        return True

    def _session(self, line: _Line) -> None:
        public_id, external_id = line.public_id("id"), line.text("external_id", blank=False)
        if self.keep("session", public_id, self.found("session", external_id)):
            self.batch.append((line.no, Session(scope=self.scope, public_id=public_id, external_id=external_id,
                                                started_at=line.time("started_at", optional=True),
                                                created_at=line.time("created_at")), public_id))

    def _turn(self, line: _Line) -> None:
        public_id, session = line.public_id("id"), self.ref(line, "session", "session")
        external_id = line.text("external_id", blank=False)
        if self.keep("turn", public_id, self.found("turn", (session, external_id))):
            self.batch.append((line.no, Turn(
                scope=self.scope, public_id=public_id, session_id=session, external_id=external_id,
                position=line.number("position", whole=True), speaker=line.text("speaker"), text=line.text("text"),
                occurred_at=line.time("occurred_at"), created_at=line.time("created_at"),
            ), public_id))

    def _episode(self, line: _Line) -> None:
        public_id, turn = line.public_id("id"), self.ref(line, "turn", "turn", optional=True)
        text, occurred_at, ingested_at = line.text("text"), line.time("occurred_at"), line.time("ingested_at")
        if not self.keep("episode", public_id, self.found("episode", turn or (text, occurred_at, ingested_at))):
            return
        status = line.choice("status", EpisodeStatus)
        # An extraction that was under way when the backup was taken is done again.
        if status == EpisodeStatus.PROCESSING:
            status = EpisodeStatus.PENDING
        importance = line.number("importance", optional=True)
        if importance is not None and not 0 <= importance <= 1:
            line.fail("an episode's importance is from 0 to 1.")
        self.batch.append((line.no, Episode(
            scope=self.scope, public_id=public_id, session_id=self.ref(line, "session", "session", optional=True), turn_id=turn,
            text=text, speaker=line.text("speaker"), occurred_at=occurred_at, ingested_at=ingested_at, importance=importance, location=line.text("location"),
            source=line.text("source"), author_id=self.user(line, "author"), status=status, error=line.text("error"),
            attempts=line.number("attempts", whole=True), processed_at=line.time("processed_at", optional=True),
            facts_dropped=line.number("facts_dropped", whole=True),
        ), public_id))
        # The summary that condensed it (memories/services/consolidate.py) comes later in the section.
        consolidated_into = line.public_id("consolidated_into", optional=True)
        if consolidated_into is not None:
            self.deferred["episode"].append((public_id, consolidated_into, line.no))

    def _entity(self, line: _Line) -> None:
        public_id, name, kind = line.public_id("id"), line.text("name", blank=False), line.text("entity_kind", blank=False)
        created_at = line.time("created_at")
        if not self.keep("entity", public_id, self.found("entity", (name, kind, created_at))):
            return
        merged_into = line.public_id("merged_into", optional=True)
        self.batch.append((line.no, Entity(scope=self.scope, public_id=public_id, name=name, kind=kind, created_at=created_at), public_id))
        if merged_into is not None:
            self.deferred["entity"].append((public_id, merged_into, line.no))

    def _alias(self, line: _Line) -> None:
        entity, normalized = self.ref(line, "entity", "entity"), line.text("normalized", blank=False)
        if self.present is not None and normalized in self.present.aliases:
            self.loaded.skipped["alias"] += 1
            self.tick()
            return
        if self.present is not None:
            self.present.aliases.add(normalized)
        self.batch.append((line.no, EntityAlias(scope=self.scope, entity_id=entity, alias=line.text("alias", blank=False),
                                                normalized=normalized, created_at=line.time("created_at")), None))

    def _fact(self, line: _Line) -> None:
        public_id = line.public_id("id")
        subject, attribute = self.ref(line, "entity", "subject"), line.text("attribute", blank=False)
        value_normalized, status = line.text("value_normalized"), line.choice("status", FactStatus)
        created_at = line.time("created_at")
        existing = self.found("fact", (subject, attribute, value_normalized, created_at))
        if existing is None and status == FactStatus.ACTIVE:
            # One active fact per value: the same active value is the same fact, whatever its id.
            existing = self.found("active_fact", (subject, attribute, value_normalized))
        if not self.keep("fact", public_id, existing):
            return
        supersedes = line.public_id("supersedes", optional=True)
        self.batch.append((line.no, Fact(
            scope=self.scope, public_id=public_id, subject_id=subject, attribute=attribute, value=line.text("value"),
            value_normalized=value_normalized, object_entity_id=self.ref(line, "entity", "object_entity", optional=True),
            sentence=line.text("sentence"), valid_from=line.time("valid_from", optional=True),
            valid_to=line.time("valid_to", optional=True), status=status,
            source_episode_id=self.ref(line, "episode", "source_episode", optional=True),
            confidence=line.number("confidence"), importance=line.number("importance"), provenance=line.text("provenance", blank=False),
            author_id=self.user(line, "author"), created_at=created_at,
        ), public_id))
        if supersedes is not None:
            self.deferred["fact"].append((public_id, supersedes, line.no))

    def _support(self, line: _Line) -> None:
        fact, episode = self.ref(line, "fact", "fact"), self.ref(line, "episode", "episode")
        if self.present is not None and (fact, episode) in self.present.supports:
            self.loaded.skipped["support"] += 1
            self.tick()
            return
        self.batch.append((line.no, FactSupport(scope=self.scope, fact_id=fact, episode_id=episode, sentence=line.text("sentence"),
                                                valid_from=line.time("valid_from", optional=True),
                                                created_at=line.time("created_at")), None))

    def _mention(self, line: _Line) -> None:
        episode, entity, role = self.ref(line, "episode", "episode"), self.ref(line, "entity", "entity"), line.text("role", blank=False)
        if self.present is not None and (episode, entity, role) in self.present.mentions:
            self.loaded.skipped["mention"] += 1
            self.tick()
            return
        self.batch.append((line.no, Mention(scope=self.scope, episode_id=episode, entity_id=entity, role=role), None))

    def _proposal(self, line: _Line) -> None:
        public_id, status = line.public_id("id"), line.choice("status", ProposalStatus)
        source, target = self.ref(line, "entity", "source"), self.ref(line, "entity", "target")
        existing = self.found("proposal", frozenset((source, target))) if status == ProposalStatus.PROPOSED else None
        if not self.keep("proposal", public_id, existing):
            return
        score = line.number("score")
        if not 0 <= score <= 1 or source == target:
            line.fail("a proposal's score is from 0 to 1, between two entities.")
        evidence = line.record.get("evidence")
        if not isinstance(evidence, dict):
            line.fail("a proposal's evidence is a JSON object.")
        # The merge it led to is not in the file (merges are not backed up): the status says it.
        self.batch.append((line.no, MergeProposal(
            scope=self.scope, public_id=public_id, source_id=source, target_id=target, kind=line.choice("proposal_kind", ProposalKind),
            score=score, evidence=evidence, status=status, created_at=line.time("created_at"),
            decided_at=line.time("decided_at", optional=True), decided_by=line.text("decided_by"),
        ), public_id))

    def _tombstone(self, line: _Line) -> None:
        public_id = line.public_id("id")
        if public_id in self.tombstones:  # held already: tombstones are never replaced
            self.loaded.skipped["tombstone"] += 1
            self.tick()
            return
        self.tombstones.add(public_id)
        digests = {}
        for part in ("episodes", "turns", "texts", "names"):
            value = line.record.get(part)
            if not isinstance(value, list) or not all(isinstance(d, str) and len(d) == 64 for d in value):
                line.fail(f"a tombstone's {part!r} is a list of SHA-256 digests (64 hex digits).")
            digests[part] = value
        self.batch.append((line.no, Tombstone(
            scope=self.scope, public_id=public_id, origin=line.public_id("origin"), kind=line.choice("erasure_kind", TombstoneKind),
            erased_at=line.time("erased_at"), erased_by=line.text("erased_by"), key_id=line.text("key_id", blank=False),
            **digests,
        ), None))

    def _audit(self, line: _Line) -> None:
        public_id, action, created_at = line.public_id("id"), line.text("action", blank=False), line.time("created_at")
        if not self.keep("audit", public_id, self.found("audit", (action, line.text("actor_label"), created_at))):
            return
        before, after = line.record.get("before"), line.record.get("after")
        if not isinstance(before, dict | list | type(None)) or not isinstance(after, dict | list | type(None)):
            line.fail("an audit event's before and after are JSON objects or null.")
        target_id = line.text("target_id")
        self.batch.append((line.no, AuditEvent(
            scope=self.scope, public_id=public_id, actor_user_id=self.user(line, "actor_user"), actor_label=line.text("actor_label"),
            action=action, target_type=line.text("target_type", blank=False),
            target_id=self.renamed.get(target_id, target_id), before=before, after=after, created_at=created_at,
        ), public_id))

    def _vector(self, line: _Line) -> None:
        target = line.text("target", blank=False)
        try:
            data = base64.b64decode(line.text("vec", blank=False), validate=True)
        except ValueError:
            data = b"?"
        if len(data) % 4:
            line.fail("a vector is base64 of float32 values.")
        if target == EmbeddingTarget.ENTITY:
            entity = self.ref(line, "entity", "entity")
            if self.reuse_vectors:
                self.batch.append((line.no, Embedding(scope=self.scope, target_type=target, target_id=entity, model=self.model,
                                                      vec=vector_decode(data)), None))
        elif target in {t.value for t in EmbeddingTarget} and target.startswith("doc_"):
            digest = line.text("text_sha1", blank=False)
            if self.reuse_vectors:
                self.loaded.doc_vectors[digest] = data
                self.loaded.written["vector"] += 1
            self.tick()
        else:
            line.fail(f"unknown vector target {target!r}.")

    def flush(self) -> None:
        if not self.batch:
            return
        kind, rows = self.kind, [row for _, row, _ in self.batch]
        if kind in self.pks:
            self._renew_taken(rows)
        model = type(rows[0])
        if model is Embedding:
            ensure_model_index(_ModelName(self.model, len(rows[0].vec)))
            model.objects.bulk_create(rows, ignore_conflicts=True)
        else:
            model.objects.bulk_create(rows)
        for _, row, public_id in self.batch:
            if public_id is not None:
                self.pks[kind][public_id] = row.pk
            if kind == "episode" and row.status == EpisodeStatus.PENDING:
                self.loaded.pending_episodes.append(row.pk)
        self.loaded.written[kind] += len(rows)
        self.tick(len(rows))
        self.batch = []

    def _renew_taken(self, rows: list) -> None:
        """A public id another scope holds already (a copy restored beside its source) gets a new
        one; the maps are keyed by the file's ids, so every later reference follows."""
        taken = set(type(rows[0]).objects.filter(public_id__in=[row.public_id for row in rows]).values_list("public_id", flat=True))
        for row in rows:
            if row.public_id in taken:
                old, row.public_id = row.public_id, uuid.uuid4()
                self.renamed[str(old)] = str(row.public_id)
                self.loaded.renewed_ids += 1

    def finish(self, header: dict) -> RowsLoaded:
        self.flush()
        expected = header["counts"]
        for kind in KINDS:
            if self.seen[kind] != expected.get(kind, 0):
                raise InvalidInput(
                    f"The header promises {expected.get(kind, 0)} {kind} record(s) and the file holds {self.seen[kind]}:"
                    " it is truncated or was edited."
                )
        # merged_into, supersedes and consolidated_into, which may point forwards within their section, linked last.
        for kind, table, column in (("entity", "memories_entity", "merged_into_id"), ("fact", "memories_fact", "supersedes_id"),
                                    ("episode", "memories_episode", "consolidated_into_id")):
            pairs = []
            for own, target, line_no in self.deferred[kind]:
                pk = self.pks[kind].get(target)
                if pk is None:
                    raise InvalidInput(f"Line {line_no}: {column[:-3]!r} refers to {kind} {target}, which is not in the file.")
                pairs.append((self.pks[kind][own], pk))
            if pairs:
                with connection.cursor() as cursor:
                    cursor.execute(
                        f"UPDATE {table} t SET {column} = v.target FROM unnest(%s::bigint[], %s::bigint[]) AS v(id, target)"
                        " WHERE t.id = v.id",
                        [[own for own, _ in pairs], [target for _, target in pairs]],
                    )
        return self.loaded


@dataclass(frozen=True)
class _ModelName:
    """What `ensure_model_index` needs of an embedder: the model's name and dimension."""

    name: str
    dim: int


class _Present:
    """A merge's view of what the target scope holds already, by public id and by natural key."""

    def __init__(self, scope: Scope):
        def ids(queryset):
            return dict(queryset.values_list("public_id", "pk"))

        self.ids = {
            "session": ids(Session.objects.in_scope(scope)), "turn": ids(Turn.objects.in_scope(scope)),
            "episode": ids(Episode.objects.in_scope(scope)), "entity": ids(Entity.objects.in_scope(scope)),
            "fact": ids(Fact.objects.in_scope(scope)), "audit": ids(AuditEvent.objects.filter(scope=scope)),
            "proposal": ids(MergeProposal.objects.in_scope(scope)),
        }
        active = Fact.objects.in_scope(scope).filter(status=FactStatus.ACTIVE)
        self.keys = {
            # A restored row keeps its created_at, so these find rows of an earlier restore of the
            # same file even where they had to take new public ids.
            "session": dict(Session.objects.in_scope(scope).values_list("external_id", "pk")),
            "turn": {(s, e): pk for s, e, pk in Turn.objects.in_scope(scope).values_list("session_id", "external_id", "pk")},
            "episode": {
                **{(t, o, i): pk for t, o, i, pk in Episode.objects.in_scope(scope).filter(turn__isnull=True)
                   .values_list("text", "occurred_at", "ingested_at", "pk")},
                **dict(Episode.objects.in_scope(scope).filter(turn__isnull=False).values_list("turn_id", "pk")),
            },
            "entity": {(n, k, c): pk for n, k, c, pk in Entity.objects.in_scope(scope).values_list("name", "kind", "created_at", "pk")},
            "fact": {
                (s, a, v, c): pk for s, a, v, c, pk in Fact.objects.in_scope(scope)
                .values_list("subject_id", "attribute", "value_normalized", "created_at", "pk")
            },
            "active_fact": {(s, a, v): pk for s, a, v, pk in active.values_list("subject_id", "attribute", "value_normalized", "pk")},
            "audit": {(a, l, c): pk for a, l, c, pk in AuditEvent.objects.filter(scope=scope).values_list("action", "actor_label", "created_at", "pk")},
            # One open proposal per pair (memories_mergeproposal_one_open_per_pair): an open pair is present.
            "proposal": {frozenset((s, t)): pk for s, t, pk in MergeProposal.objects.in_scope(scope)
                         .filter(status=ProposalStatus.PROPOSED).values_list("source_id", "target_id", "pk")},
        }
        self.aliases = set(EntityAlias.objects.in_scope(scope).values_list("normalized", flat=True))
        self.supports = set(FactSupport.objects.in_scope(scope).values_list("fact_id", "episode_id"))
        self.mentions = set(Mention.objects.in_scope(scope).values_list("episode_id", "entity_id", "role"))


def scope_is_empty(scope: Scope) -> bool:
    """No memory rows (audit events of the scope itself do not count)."""
    return not any(model.objects.in_scope(scope).exists() for model in (Session, Episode, Entity, Fact))


def backup_load(
    *, scope: Scope, header: dict, lines: Iterable[tuple[int, dict]], merge: bool, model: str, progress: Progress | None = None,
) -> RowsLoaded:
    """Insert the records after the header into `scope`. Call inside a transaction: an error on
    any line (InvalidInput naming it) must roll back every row written before it."""
    loader = _Loader(scope=scope, header=header, merge=merge, model=model, progress=progress)
    for line_no, record in lines:
        loader.add(line_no, record)
    return loader.finish(header)
