"""`memoryweb ingest FILE --scope S`: a file of sessions, all or nothing, idempotent, scoped."""

import gzip
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories.models import Episode, EpisodeStatus, Session, Turn

SESSIONS = [
    {"session_id": "s1", "messages": [
        {"id": "1", "speaker": "ada", "text": "I moved to Lisbon last spring.", "occurred_at": "2025-03-01T10:00:00Z"},
        {"id": "2", "speaker": "bo", "text": "Lisbon is lovely. I like sailing.", "occurred_at": "2025-03-01T10:01:00Z"},
    ]},
    {"session_id": "s2", "messages": [
        {"id": "1", "speaker": "ada", "text": "I adopted a ferret called Zanzibar.", "occurred_at": "2025-04-02T09:00:00Z"},
    ]},
]


def write(path, lines) -> str:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return str(path)


def ingest(committed, *args) -> str:
    out = io.StringIO()
    with committed():
        call_command("ingest", *args, stdout=out)
    return out.getvalue()


def counts(scope) -> tuple[int, int, int]:
    return (Session.objects.in_scope(scope).count(), Turn.objects.in_scope(scope).count(), Episode.objects.in_scope(scope).count())


def test_a_file_of_sessions_is_stored_extracted_and_the_second_time_skipped(cast, committed, tmp_path):
    path = write(tmp_path / "s.jsonl", [SESSIONS[0], "", SESSIONS[1]])
    out = ingest(committed, path, "--scope", "alpha", "--as", "editor")
    assert out.strip() == "Ingested 2 sessions into alpha: 3 new turns, 0 already there."
    assert counts(cast.scope_a) == (2, 3, 3) and counts(cast.scope_b) == (0, 0, 0)
    episodes = Episode.objects.in_scope(cast.scope_a)
    assert {e.status for e in episodes} == {EpisodeStatus.DONE} and {e.source for e in episodes} == {"cli"}
    assert {e.author for e in episodes} == {cast.editor}
    again = ingest(committed, path, "--scope", "alpha", "--as", "editor", "--json")
    assert json.loads(again) == {"scope": "alpha", "sessions": 2, "created": 0, "skipped": 3}
    assert counts(cast.scope_a) == (2, 3, 3)


def test_gzip_files_are_read(cast, committed, tmp_path):
    path = tmp_path / "s.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join(json.dumps(s) for s in SESSIONS) + "\n").encode()))
    ingest(committed, str(path), "--scope", "alpha", "--as", "owner")
    assert counts(cast.scope_a) == (2, 3, 3)


@pytest.mark.parametrize("bad, said", [
    ('{"session_id": "s3", "messages": [', "Line 2 is not valid JSON"),
    ('["not", "an", "object"]', "Line 2 must be an object like"),
    ({"session_id": "s3", "messages": [{"id": "1", "speaker": "ada", "text": "   "}]}, "Line 2: "),
    ({"session_id": "s3", "messages": [{"id": "1", "speaker": "ada", "text": "hi", "occurred_at": "the 45th of May"}]}, "Line 2: "),
    ({"session_id": "", "messages": [{"id": "1", "speaker": "ada", "text": "hi"}]}, "Line 2: "),
])
def test_a_bad_line_is_named_and_nothing_is_stored(cast, committed, tmp_path, bad, said):
    path = write(tmp_path / "s.jsonl", [SESSIONS[0], bad, SESSIONS[1]])
    with pytest.raises(CommandError) as refused:
        ingest(committed, path, "--scope", "alpha", "--as", "owner")
    assert str(refused.value).startswith(said) and "othing was stored" in str(refused.value)
    assert counts(cast.scope_a) == (0, 0, 0)


def test_unreadable_and_empty_files_are_refused(cast, committed, tmp_path):
    with pytest.raises(CommandError, match="Cannot read"):
        ingest(committed, str(tmp_path / "missing.jsonl"), "--scope", "alpha", "--as", "owner")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(CommandError, match="not a readable UTF-8"):
        ingest(committed, str(tmp_path / "bin.jsonl"), "--scope", "alpha", "--as", "owner")
    with pytest.raises(CommandError, match="holds no sessions"):
        ingest(committed, write(tmp_path / "empty.jsonl", [""]), "--scope", "alpha", "--as", "owner")


def test_a_viewer_and_an_outsider_are_refused_and_nothing_is_stored(cast, committed, tmp_path):
    path = write(tmp_path / "s.jsonl", SESSIONS)
    with pytest.raises(CommandError, match="may not write"):
        ingest(committed, path, "--scope", "alpha", "--as", "viewer")
    with pytest.raises(CommandError, match="No scope"):
        ingest(committed, path, "--scope", "alpha", "--as", "outsider")
    assert counts(cast.scope_a) == (0, 0, 0)
