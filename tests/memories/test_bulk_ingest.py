"""The bulk ingest (COPY) behind `memoryweb ingest`, and building a big scope: the rows it writes
are the ones `ingest_session` writes, it is all or nothing and idempotent, and indexing what it
wrote resumes after an interruption. Its speed is measured in `bench recall --turns`, not here."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.permissions import Principal
from memoryweb.errors import Forbidden
from memoryweb.providers.embedders import get_embedder
from memories.models import Episode, EpisodeStatus, Session, Turn
from memories.services.bulk_ingest import BulkInvalid, ingest_sessions_bulk
from memories.services.ingest import ingest_session
from retrieval import indexing
from retrieval.corpus import Corpus
from retrieval.indexing import index_pending
from retrieval.models import Posting, SearchDocument, TermStat
from retrieval.reindex import missing_vectors

FIELDS = ("external_id", "position", "speaker", "text", "occurred_at")


def corpus_lines(turns: int, seed: int = 3) -> list[tuple[int, dict]]:
    return [(n, {"session_id": sid, "messages": m}) for n, (sid, m) in enumerate(Corpus(turns=turns, seed=seed).sessions(), start=1)]


def stored(scope) -> list[tuple]:
    """Each turn as (session, fields…) with its episode's, in order."""
    rows = []
    for turn in Turn.objects.in_scope(scope).select_related("session").prefetch_related("episodes").order_by("session__external_id", "position"):
        (e,) = turn.episodes.all()
        rows.append((turn.session.external_id, *(getattr(turn, f) for f in FIELDS),
                     e.text, e.speaker, e.occurred_at, e.session_id == turn.session_id, e.source, e.author_id, e.status))
    return rows


def test_copy_writes_the_rows_ingest_session_writes(cast):
    lines = corpus_lines(130)
    ingest_sessions_bulk(scope=cast.scope_a, sessions=lines, actor=Principal(user=cast.editor), source="cli", enqueue=False)
    for _, body in lines:
        ingest_session(scope=cast.scope_b, session_id=body["session_id"], messages=body["messages"],
                       actor=Principal(user=cast.outsider), source="cli", enqueue=False)
    bulk, one_by_one = stored(cast.scope_a), stored(cast.scope_b)
    assert len(bulk) == 130 and [r[:-2] for r in bulk] == [r[:-2] for r in one_by_one]
    assert {r[-2] for r in bulk} == {cast.editor.pk} and {r[-1] for r in bulk} == {EpisodeStatus.PENDING}
    # New rows, new public ids; the sequences moved past the ids COPY used (a later insert does not collide).
    assert len(set(Turn.objects.values_list("public_id", flat=True))) == 260
    assert len(set(Episode.objects.values_list("public_id", flat=True))) == 260
    ingest_session(scope=cast.scope_a, session_id="later", messages=[{"id": "1", "speaker": "ada", "text": "hello"}],
                   actor=Principal(user=cast.editor), enqueue=False)
    assert Turn.objects.in_scope(cast.scope_a).count() == 131


def test_a_rerun_skips_what_was_stored_and_continues_a_session(cast):
    actor = Principal(user=cast.editor)
    first = [(1, {"session_id": "s", "messages": [{"id": "a", "speaker": "ada", "text": "one"}, {"id": "b", "speaker": "bo", "text": "two"}]})]
    assert ingest_sessions_bulk(scope=cast.scope_a, sessions=first, actor=actor, enqueue=False).created == 2
    # Line 2 goes on with session s; line 3 repeats turn b of it, which is skipped too.
    more = first + [
        (2, {"session_id": "s", "messages": [{"id": "c", "speaker": "ada", "text": "three"}]}),
        (3, {"session_id": "s", "messages": [{"id": "b", "speaker": "bo", "text": "two again"}]}),
    ]
    result = ingest_sessions_bulk(scope=cast.scope_a, sessions=more, actor=actor, enqueue=False)
    assert (result.sessions, result.created, result.skipped) == (1, 1, 2)
    turns = list(Turn.objects.in_scope(cast.scope_a).order_by("position").values_list("external_id", "position", "text"))
    assert turns == [("a", 0, "one"), ("b", 1, "two"), ("c", 2, "three")]
    assert Session.objects.in_scope(cast.scope_a).count() == 1 and Episode.objects.in_scope(cast.scope_a).count() == 3


def test_a_bad_line_deep_in_a_large_file_is_named_and_nothing_is_written(cast, tmp_path, committed):
    lines = corpus_lines(3000)
    lines[41][1]["messages"][7]["occurred_at"] = "2999-01-01T00:00:00Z"  # in the future
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(body) + "\n" for _, body in lines))
    with pytest.raises(CommandError) as refused, committed():
        call_command("ingest", str(path), "--scope", "alpha", "--as", "editor", stdout=io.StringIO())
    assert str(refused.value).startswith("Line 42: ") and "future" in str(refused.value) and "Nothing was stored" in str(refused.value)
    assert not Turn.objects.exists() and not Episode.objects.exists() and not Session.objects.exists()
    with pytest.raises(BulkInvalid) as invalid:
        ingest_sessions_bulk(scope=cast.scope_a, sessions=[(5, {"session_id": "x", "messages": []})], actor=Principal(user=cast.editor))
    assert invalid.value.number == 5


def test_a_viewer_may_not_bulk_ingest(cast):
    with pytest.raises(Forbidden):
        ingest_sessions_bulk(scope=cast.scope_a, sessions=corpus_lines(10), actor=Principal(user=cast.viewer))
    assert not Turn.objects.exists()


class Interrupted(Exception):
    pass


class StopsAfter:
    """The embedder in force, failing once `calls` batches were embedded: a worker killed mid-build."""

    def __init__(self, embedder, calls: int):
        self.inner, self.left = embedder, calls
        self.name, self.dim = embedder.name, embedder.dim

    def embed(self, texts):
        if self.left == 0:
            raise Interrupted
        self.left -= 1
        return self.inner.embed(texts)


def index_snapshot(scope) -> tuple:
    """Documents (collection, text: a turn's or a window's, dated), term statistics, postings."""
    docs = sorted(SearchDocument.objects.filter(scope=scope).values_list("collection", "text"))
    terms = sorted(TermStat.objects.filter(scope=scope).values_list("collection", "lexeme", "df"))
    return docs, terms, Posting.objects.filter(scope_id=scope.pk).count()


@pytest.mark.django_db(transaction=True)  # each indexing batch commits, as in a real build
def test_an_interrupted_index_build_resumes_where_it_stopped(cast, monkeypatch):
    monkeypatch.setattr(indexing, "_BATCH", 40)
    lines = corpus_lines(400)
    ingest_sessions_bulk(scope=cast.scope_a, sessions=lines, actor=Principal(user=cast.owner), enqueue=False)
    ingest_sessions_bulk(scope=cast.scope_b, sessions=lines, actor=Principal(user=cast.outsider), enqueue=False)
    embedder = get_embedder()
    index_pending(scope=cast.scope_b, full=True, embedder=embedder)  # the uninterrupted build
    with pytest.raises(Interrupted):
        index_pending(scope=cast.scope_a, full=True, embedder=StopsAfter(embedder, calls=3))
    halfway = SearchDocument.objects.filter(scope=cast.scope_a).count()
    assert 0 < halfway < SearchDocument.objects.filter(scope=cast.scope_b).count()  # committed batches stay
    index_pending(scope=cast.scope_a, full=True, embedder=embedder)  # resumed
    a, b = index_snapshot(cast.scope_a), index_snapshot(cast.scope_b)
    assert len(a[0]) == 3 * 400 and a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
    assert missing_vectors(scope=cast.scope_a, model=embedder.name) == 0
