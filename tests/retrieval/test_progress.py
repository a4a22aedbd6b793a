"""Long CLI operations show a progress bar on a terminal's stderr, and nothing extra with --json or
when stderr is a pipe: `ingest`, `reindex`, `index`, `eval locomo`, `bench ingest`, `bench reindex` (backup and restore: test_backup.py)."""

import fcntl
import json
import os
import pty
import struct
import sys
import termios
import threading
from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from memoryweb.providers.embedders import embedder_build
from memories.services.ingest import ingest_session, remember
from memories.services.vectors import ensure_model_index
from retrieval.indexing import index_pending

LOCOMO = [{
    "sample_id": "tiny",
    "conversation": {
        "speaker_a": "Ada", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"dia_id": "D1:1", "speaker": "Ada", "text": "I moved to Paris last week"},
                      {"dia_id": "D1:2", "speaker": "Bo", "text": "Paris is lovely in spring"}],
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": [{"dia_id": "D2:1", "speaker": "Bo", "text": "I adopted a dog called Rex"}],
    },
    "qa": [{"question": "Where did Ada move?", "evidence": ["D1:1"], "category": 4},
           {"question": "What is the name of Bo's dog?", "evidence": ["D2:1"], "category": 4}],
}]


@pytest.fixture(scope="module", autouse=True)
def _hash_128_index(django_db_setup, django_db_blocker):
    """The HNSW index of the model `reindex` moves to below, made once and committed (PostgreSQL
    refuses CREATE INDEX inside a test's transaction once rows were written)."""
    with django_db_blocker.unblock():
        ensure_model_index(embedder_build("hash:128"))


@pytest.fixture
def commands(cast, tmp_path, django_capture_on_commit_callbacks):
    for text in ("I love playing football", "I moved from San Francisco to New York"):
        with django_capture_on_commit_callbacks(execute=True):
            remember(scope=cast.scope_a, text=text, speaker="ankesh", occurred_at=datetime(2025, 1, 1, tzinfo=UTC),
                     actor=cast.p_owner)
    index_pending(scope=cast.scope_a, full=True)
    # Turns left for `index` to index.
    ingest_session(scope=cast.scope_a, session_id="late", messages=[{"id": "1", "speaker": "ada", "text": "I like coffee"}],
                   actor=cast.p_owner, enqueue=False)
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps(LOCOMO))
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text(json.dumps({"session_id": "s1", "messages": [{"id": "1", "speaker": "ada", "text": "I like tea"}]}) + "\n")
    return {
        "ingest": (["ingest", str(sessions), "--scope", "alpha"], "ingest alpha"),
        "reindex": (["reindex", "--scope", "alpha", "--model", "hash:128"], "reindex alpha"),
        "index": (["index", "--scope", "alpha"], "index alpha"),
        "eval": (["eval", "locomo", "--dataset", str(dataset)], "eval locomo"),
        "bench ingest": (["bench", "ingest", "--turns", "12", "--episodes", "4", "--session-size", "4"], "bench ingest"),
        "bench reindex": (["bench", "reindex", "--dataset", str(dataset), "--model", "hash:128"], "bench reindex"),
    }


def _run_with_stderr(monkeypatch, args: list[str], stream: str) -> str:
    """Run the command with stderr on a pseudo-terminal (sized 100×24, or unsized) or a pipe;
    return what reached it."""
    if stream.startswith("pty"):
        reader, writer = pty.openpty()
        if stream == "pty":
            fcntl.ioctl(writer, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    else:
        reader, writer = os.pipe()
    chunks: list[bytes] = []

    def drain():  # read as it comes, so a full buffer never blocks the writer
        while True:
            try:
                data = os.read(reader, 4096)
            except OSError:  # a pty's reader fails with EIO once the writer is closed
                return
            if not data:
                return
            chunks.append(data)

    thread = threading.Thread(target=drain)
    thread.start()
    with os.fdopen(writer, "w", buffering=1) as stderr:
        monkeypatch.setattr(sys, "stderr", stderr)
        call_command(*args, "--as", "owner", stdout=open(os.devnull, "w"))
        stderr.flush()
        monkeypatch.setattr(sys, "stderr", sys.__stderr__)
    thread.join(timeout=10)
    os.close(reader)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("name", ["ingest", "reindex", "index", "eval", "bench ingest", "bench reindex"])
def test_a_terminal_gets_a_progress_bar_on_stderr(commands, monkeypatch, capsys, name):
    args, label = commands[name]
    shown = _run_with_stderr(monkeypatch, args, "pty")
    assert label in shown and "100%" in shown, shown


@pytest.mark.parametrize("name", ["ingest", "reindex", "index", "eval", "bench ingest", "bench reindex"])
@pytest.mark.parametrize("how", ["--json on a terminal", "a pipe"])
def test_json_or_a_pipe_gets_nothing_extra(commands, monkeypatch, capsys, name, how):
    args, _ = commands[name]
    shown = _run_with_stderr(monkeypatch, [*args, "--json"] if how.startswith("--json") else args,
                             "pty" if how.startswith("--json") else "pipe")
    assert shown == ""


def test_a_terminal_that_reports_no_size_still_gets_the_bar(commands, monkeypatch, capsys):
    args, label = commands["reindex"]
    shown = _run_with_stderr(monkeypatch, args, "pty unsized")
    assert label in shown and "100%" in shown, shown
