"""Backing up a scope to a file and restoring it: the services every door calls.

`scope_backup` writes the versioned, gzip'd JSON Lines file of docs/BACKUP-FORMAT.md;
`scope_restore` reads one back into a new, empty or (with `merge`) existing scope, all in one
transaction, then rebuilds the scope's search index so the restored memory is searchable at
once. The rows themselves are `memories.services.backup`; this module sits above it because a
restore must rebuild retrieval's index, and a backup with vectors carries the search documents'.

Only team admins back up and restore (a backup holds everything the scope ever heard, audit
trail included; a restore writes a whole scope): `require` for READ first (another team's scope
is a 404), then the admin role (a 403). API tokens never administer, so they can do neither.
"""

import gzip
import json
import logging
import os
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.audit import audit_record
from accounts.models import Team
from accounts.permissions import Access, Principal, can, require
from memoryweb.errors import Conflict, Forbidden, InvalidInput, NotFound
from memoryweb.providers.embedders import Embedder, configured_embedder_name, get_embedder
from memoryweb.queue import enqueue
from memories.models import Embedding, EmbeddingTarget, Entity, Episode, Scope
from memories.scopes import scope_create, scopes_for
from memories.services.backup import (
    FORMAT, VERSION, Progress, RowsLoaded, Ticker, backup_counts, backup_lines, backup_load, backup_records,
    header_check, scope_is_empty, text_digest, vector_decode, vector_encode,
)
from memories.services.vectors import embed_and_store
from retrieval.documents import vector_text
from retrieval.embedder import scope_model
from retrieval.forget import documents_embed_after_commit
from retrieval.indexing import index_pending, scope_lock_for_transaction
from retrieval.tombstones import tombstones_reapply

logger = logging.getLogger("memoryweb.backup")


@dataclass(frozen=True)
class BackupReceipt:
    scope: str
    created_at: datetime
    counts: dict[str, int]
    bytes: int
    with_vectors: bool
    embedding_model: str
    seconds: float

    def as_dict(self) -> dict:
        return {**asdict(self), "created_at": self.created_at.isoformat(), "rows": sum(self.counts.values())}


@dataclass(frozen=True)
class RestoreReceipt:
    scope: str
    created: bool  # a new scope was made for it
    merge: bool
    written: dict[str, int]
    skipped: dict[str, int]  # a merge found them present already
    renewed_ids: int  # rows given a new public id, since another scope holds theirs
    vectors_reused: int
    documents: int | None  # search documents indexed after the commit (None: queued)
    seconds: float
    erased_again: int = 0  # rows of the file an erasure had removed, removed again (retrieval/tombstones.py)
    reapplied: tuple[dict, ...] = ()  # per erasure: its id, kind, date, rows and reason ("erased on <date>")
    tombstones_unmatched: int = 0  # tombstones hashed with a key this deployment does not hold

    def as_dict(self) -> dict:
        return {**asdict(self), "reapplied": list(self.reapplied), "rows": sum(self.written.values())}


def _require_admin(principal: Principal | None, scope: Scope, doing: str) -> None:
    require(principal, scope, Access.READ)
    if principal is not None and not can(principal, scope, Access.ADMIN):
        raise Forbidden(f"Only admins of team {scope.team.slug!r} can {doing} its scopes; API tokens never can.")


class _CountingWriter:
    """Passes bytes to `out`, counting them (the out file may be a pipe or a response)."""

    def __init__(self, out):
        self.out, self.bytes = out, 0

    def write(self, data) -> int:
        self.out.write(data)
        self.bytes += len(data)
        return len(data)

    def flush(self) -> None:
        if hasattr(self.out, "flush"):
            self.out.flush()


def scope_backup(
    *, principal: Principal | None, scope: Scope, out, with_vectors: bool = False, progress: Progress | None = None,
) -> BackupReceipt:
    """Write `scope` to the binary file `out` (gzip'd JSON Lines, docs/BACKUP-FORMAT.md).

    Read from one snapshot (REPEATABLE READ when not inside a transaction already), so rows
    arriving meanwhile do not break the counts in the header; the tables are read in chunks."""
    _require_admin(principal, scope, "back up")
    started = time.perf_counter()
    model = scope_model(scope) or configured_embedder_name()  # the model its vectors are on (a reindex may have moved it)
    created_at = timezone.now()
    sink = _CountingWriter(out)
    with transaction.atomic():
        if connection.in_atomic_block and not connection.savepoint_ids:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        counts = backup_counts(scope, with_vectors=with_vectors, model=model)
        if with_vectors:
            counts["vector"] += _document_vector_count(scope, model)
        header = {
            "format": FORMAT, "version": VERSION, "memoryweb_version": _version(),
            "created_at": created_at.isoformat(),
            "scope": {"id": str(scope.public_id), "slug": scope.slug, "name": scope.name, "description": scope.description,
                      "settings": scope.settings or {}, "team": scope.team.slug},
            "embedding_model": model, "with_vectors": with_vectors, "counts": counts,
        }
        tick = Ticker(progress, sum(counts.values()))
        # mtime 0: the same scope backs up to the same bytes, whatever the clock says.
        with gzip.GzipFile(fileobj=sink, mode="wb", mtime=0, compresslevel=6) as stream:
            stream.write(_line(header))
            records = backup_records(scope, with_vectors=with_vectors, model=model)
            for record in records:
                stream.write(_line(record))
                tick()
            if with_vectors:
                for record in _document_vector_records(scope, model):
                    stream.write(_line(record))
                    tick()
    sink.flush()
    receipt = BackupReceipt(scope=scope.slug, created_at=created_at, counts=counts, bytes=sink.bytes, with_vectors=with_vectors,
                            embedding_model=model, seconds=round(time.perf_counter() - started, 3))
    audit_record(principal=principal, action="scope.backup", target_type="scope", target_id=scope.public_id, scope=scope,
                 after={"counts": counts, "bytes": sink.bytes, "with_vectors": with_vectors})
    return receipt


def _version() -> str:
    try:
        return version("memoryweb")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def _line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


_DOCUMENT_VECTORS = (
    " FROM retrieval_searchdocument d JOIN retrieval_embedding e"
    " ON e.target_type = 'doc_' || d.collection AND e.target_id = d.id AND e.model = %s WHERE d.scope_id = %s"
)


def _document_vector_count(scope: Scope, model: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*)" + _DOCUMENT_VECTORS, [model, scope.pk])
        return cursor.fetchone()[0]


def _document_vector_records(scope: Scope, model: str):
    """The search documents' vectors, keyed by the digest of the text they embed (`vector_text`):
    a restore builds the same documents from the same rows and finds them by it."""
    with connection.chunked_cursor() as cursor:
        cursor.execute("SELECT d.collection, d.text, d.speaker, e.vec::float4[]" + _DOCUMENT_VECTORS + " ORDER BY d.id", [model, scope.pk])
        for collection, text, speaker, vec in cursor:
            embedded = vector_text(collection=collection, text=text, speaker=speaker)
            yield {"kind": "vector", "target": f"doc_{collection}", "text_sha1": text_digest(embedded), "vec": vector_encode(vec)}


class _StoredVectors:
    """The embedder in force, answering from a backup's vectors where the text is the same."""

    def __init__(self, embedder: Embedder, vectors: dict[str, bytes]):
        self.name, self.dim, self._embedder, self._vectors = embedder.name, embedder.dim, embedder, vectors
        self.reused = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        found = [self._vectors.get(text_digest(t)) for t in texts]
        missing = [t for t, data in zip(texts, found) if data is None]
        computed = iter(self._embedder.embed(missing) if missing else [])
        self.reused += len(texts) - len(missing)
        return [vector_decode(data) if data is not None else next(computed) for data in found]


def scope_restore(
    *, principal: Principal, file, scope: Scope | str | None = None, team: Team | None = None, merge: bool = False,
    index: bool = True, progress: Progress | None = None,
) -> RestoreReceipt:
    """Restore the backup in the binary file `file`.

    scope: an existing Scope, a slug (an existing scope, or a new one created in `team`, default
    the principal's personal team), or None for the slug the backup names. A scope holding
    memory already is refused unless `merge`: then rows present (by public id, or by their
    natural key: a session's id, an alias, an active value…) are skipped and the rest added.
    Everything is written in one transaction: a bad line anywhere (InvalidInput naming it)
    leaves nothing behind, not even a new scope. Then the search index is rebuilt (`index`),
    reusing the file's vectors when they were made with the embedding model in force, or queued."""
    started = time.perf_counter()
    embedder = get_embedder()
    # A scope named by the caller is checked before the file is read: a refusal never depends on the upload.
    target = _existing_target(principal, scope) if scope is not None else None
    lines = backup_lines(file)
    first = next(lines, None)
    if first is None:
        raise InvalidInput("Line 1: the file is empty.")
    header = header_check(*first)
    if scope is None:
        target = _existing_target(principal, header["scope"]["slug"])
    with transaction.atomic():
        created = target is None
        if created:
            target = _scope_new(principal=principal, header=header, slug=scope or header["scope"]["slug"], team=team)
        else:
            target = Scope.objects.select_for_update().get(pk=target.pk)
            if not merge and not scope_is_empty(target):
                raise Conflict(f"Scope {target.slug!r} holds memory already: restore into a new or empty scope, or merge.")
        scope_lock_for_transaction(target)  # an indexer waits for the rows, then sees them all
        loaded = backup_load(scope=target, header=header, lines=lines, merge=merge, model=embedder.name, progress=progress)
        # Before the commit: what an erasure removed since the backup was taken never reappears.
        again = tombstones_reapply(scope=target, origins=_origins(header, target))
        reapplied = tuple(r.as_dict() for r in again.reapplied)
        audit_record(principal=principal, action="scope.restore", target_type="scope", target_id=target.public_id, scope=target,
                     after={"from": header["scope"]["slug"], "backup_created_at": header.get("created_at"), "merge": merge,
                            "written": loaded.written, "skipped": loaded.skipped, "renewed_ids": loaded.renewed_ids,
                            "erased_again": again.rows, "reapplied": list(reapplied), "tombstones_unmatched": again.unmatched})
        pending = Episode.objects.filter(pk__in=loaded.pending_episodes).values_list("pk", flat=True).order_by("pk")
        for episode_pk in pending:  # extraction was still to come when it was backed up
            enqueue("memories.extract_episode", episode_pk)
        if not index:
            enqueue("retrieval.index_scope", target.pk)
    documents, reused = None, loaded.written["vector"] - len(loaded.doc_vectors)
    if index:
        documents, reused_docs = _index(scope=target, loaded=loaded, embedder=embedder)
        reused += reused_docs
    if again.rewritten:
        documents_embed_after_commit(scope=target, doc_ids=again.rewritten, why=f"restoring into {target.slug}")
    return RestoreReceipt(
        scope=target.slug, created=created, merge=merge, written=loaded.written, skipped=loaded.skipped,
        renewed_ids=loaded.renewed_ids, vectors_reused=reused, documents=documents,
        seconds=round(time.perf_counter() - started, 3), erased_again=again.rows, reapplied=reapplied,
        tombstones_unmatched=again.unmatched,
    )


def _origins(header: dict, target: Scope) -> set[uuid.UUID]:
    """The scopes whose erasures bind this restore: the one backed up, and the target itself."""
    origins = {target.public_id}
    try:
        origins.add(uuid.UUID(str(header["scope"].get("id"))))
    except ValueError:
        pass  # a header without a usable id: the file's own tombstones still apply
    return origins


def _existing_target(principal: Principal | None, scope: Scope | str) -> Scope | None:
    """The existing scope to restore into, once the principal may (team admins); None: a new one."""
    if isinstance(scope, str):
        found = Scope.objects.filter(slug=scope).select_related("team").first()
        if found is None:
            return None
        if principal is not None and not scopes_for(principal).filter(pk=found.pk).exists():
            # Another team's scope does not exist for this principal; its slug is not free either.
            raise NotFound(f"No scope named {scope!r} you may restore into (the name is taken).")
        scope = found
    _require_admin(principal, scope, "restore into")
    return scope


def _scope_new(*, principal: Principal, header: dict, slug: str, team: Team | None) -> Scope:
    """The new scope, with the name, description and settings of the one backed up."""
    settings_ = header["scope"].get("settings") or {}
    if not isinstance(settings_, dict):
        raise InvalidInput("Line 1: the header's scope settings are not an object.")
    created = scope_create(principal=principal, slug=slug, team=team, name=header["scope"].get("name") or slug,
                           description=header["scope"].get("description") or "", weights=settings_.get("weights") or None)
    if settings_.keys() - {"weights"}:
        created.settings = {**settings_, **created.settings}
        created.save(update_fields=["settings"])
    return created


def _index(*, scope: Scope, loaded: RowsLoaded, embedder: Embedder) -> tuple[int, int]:
    """Entity vectors the file did not bring, then the whole search index. Returns (documents, vectors reused)."""
    _entity_vectors_fill(scope=scope, embedder=embedder)
    stored = _StoredVectors(embedder, loaded.doc_vectors)
    documents = index_pending(scope=scope, full=True, embedder=stored)
    return documents, stored.reused


def _entity_vectors_fill(*, scope: Scope, embedder: Embedder) -> None:
    """Entity resolution compares name vectors: every restored entity needs one for the model in force."""
    has = set(Embedding.objects.filter(scope=scope, model=embedder.name, target_type=EmbeddingTarget.ENTITY)
              .values_list("target_id", flat=True))
    missing = [(pk, name) for pk, name in Entity.objects.in_scope(scope).order_by("id").values_list("pk", "name") if pk not in has]
    for start in range(0, len(missing), 2000):
        embed_and_store(scope=scope, target_type=EmbeddingTarget.ENTITY, items=missing[start : start + 2000], embedder=embedder)


# ---------------------------------------------------------------- scheduled backups


def backups_root() -> Path:
    return Path(settings.MEMORYWEB_HOME) / "backups"


def scheduled_backups(*, keep: int | None = None, root: Path | None = None, now: datetime | None = None) -> dict:
    """Back up every scope to `<root>/<slug>/<UTC timestamp>.jsonl.gz` (default root
    `$MEMORYWEB_HOME/backups`) and keep the newest `keep` (MEMORYWEB_BACKUP_KEEP) of each scope.
    A scope that fails is logged and the others go on. Returns the files written and removed."""
    keep = keep if keep is not None else settings.MEMORYWEB_BACKUP_KEEP
    root = root or backups_root()
    stamp = (now or timezone.now()).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    written, removed, failed = [], [], []
    for scope in Scope.objects.select_related("team").order_by("id"):
        folder = root / scope.slug
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stamp}.jsonl.gz"
        partial = path.with_name(path.name + ".part")  # never a half-written file under the final name
        try:
            with open(partial, "wb") as out:
                scope_backup(principal=None, scope=scope, out=out)
            os.replace(partial, path)
        except Exception:
            logger.exception("Scheduled backup of scope %s failed", scope.slug)
            partial.unlink(missing_ok=True)
            failed.append(scope.slug)
            continue
        written.append(str(path))
        # The timestamp sorts as the time it names.
        for old in sorted(folder.glob("*.jsonl.gz"), reverse=True)[keep:]:
            old.unlink()
            removed.append(str(old))
    return {"written": written, "removed": removed, "failed": failed}
