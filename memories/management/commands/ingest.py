"""`memoryweb ingest FILE --scope S`: a file of conversations into a scope, all or nothing.

The file holds one session per line (JSON Lines, gzip if it ends in .gz, `-` for stdin), each
as the API's session body: `{"session_id": "…", "messages": [{"id", "speaker", "text",
"occurred_at"?}, …]}`. Every line is checked first, then all are stored in one transaction, the
turns and episodes through COPY (memories/services/bulk_ingest.py), so a bad line (named by its
number) leaves the scope as it was; turns sent before are skipped (idempotent on turn ids), so
the same file twice stores nothing new. Extraction and indexing are
queued once everything is committed (run at once when there is no broker)."""

import gzip
import io
import json
import sys

from django.core.management.base import CommandError

from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import no_progress, progress_bar
from memories.scopes import scope_get
from memories.services.bulk_ingest import BulkInvalid, ingest_sessions_bulk

MAX_LINE_BYTES = 8 * 1024 * 1024


class Command(MemorywebCommand):
    help = "Ingest a file of conversations (JSON Lines, one session per line) into a scope, all or nothing."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("file", help="JSON Lines file (.gz too) of sessions, or - for stdin")
        parser.add_argument("--scope", required=True, help="scope slug")

    def handle(self, *args, **options):
        principal = self.principal(options)
        scope = scope_get(principal, options["scope"], Access.WRITE)
        sessions = _read_sessions(options["file"])
        if not sessions:
            raise CommandError(f"{options['file']} holds no sessions: nothing was stored.")
        with progress_bar(label=f"ingest {scope.slug}", quiet=options["json"], unit="turns") as progress:
            try:
                result = ingest_sessions_bulk(scope=scope, sessions=sessions, actor=principal, source="cli", progress=progress or no_progress)
            except BulkInvalid as exc:
                raise CommandError(f"Line {exc.number}: {exc.message} Nothing was stored.") from None
        created, skipped = result.created, result.skipped
        summary = {"scope": scope.slug, "sessions": len(sessions), "created": created, "skipped": skipped}
        if options["json"]:
            self.stdout.write(json.dumps(summary))
        else:
            self.stdout.write(f"Ingested {len(sessions)} sessions into {scope.slug}: {created} new turns, {skipped} already there.")


def _read_sessions(path: str) -> list[tuple[int, dict]]:
    """(line number, session) for every non-blank line, or a CommandError naming the first bad one."""
    try:
        if path == "-":
            stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")
        elif path.endswith(".gz"):
            stream = io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
        else:
            stream = open(path, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    sessions = []
    try:
        with stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                if len(line) > MAX_LINE_BYTES:
                    raise CommandError(f"Line {number} is longer than {MAX_LINE_BYTES // (1024 * 1024)} MB: nothing was stored.")
                sessions.append((number, _session(line, number)))
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile, OSError) as exc:
        raise CommandError(f"{path} is not a readable UTF-8 (or gzip) file ({exc.__class__.__name__}): nothing was stored.") from None
    return sessions


def _session(line: str, number: int) -> dict:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CommandError(f"Line {number} is not valid JSON ({exc.msg}, column {exc.colno}): nothing was stored.") from None
    if not isinstance(data, dict) or not isinstance(data.get("session_id"), str) or not isinstance(data.get("messages"), list):
        raise CommandError(
            f'Line {number} must be an object like {{"session_id": "…", "messages": [{{"id", "speaker", "text"}}, …]}}: nothing was stored.'
        )
    return data
