"""A background index run (`index_if_free`, the runner's; `index_queued`, a worker's) writes the
documents of what is pending first and makes their vectors after, a slice at a time; between two
slices, rows committed meanwhile get their documents (retrieval/indexing.py: `_vectors_after`). So
a write is searchable by its words after about one slice's model pass, however far behind the
model is. A run that dies between the two steps leaves documents without vectors, which the next
run's sweep gives theirs; a bulk backlog keeps the batch-by-batch order. Between two full sweeps
(FULL_SWEEP_SECONDS), a large scope's run looks for rows without a document only among recent ids."""

from datetime import UTC, datetime

import pytest
from django.db import connection

from memories.models import Embedding, Episode
from memories.services.ingest import ingest_session
from memoryweb.providers.embedders import HashEmbedder
from retrieval import indexing
from retrieval.indexing import index_if_free, index_queued
from retrieval.models import Collection, IndexState, SearchDocument

pytestmark = pytest.mark.django_db


class Watching(HashEmbedder):
    """The hash embedder; before each call it notes which episodes have a document and which a
    vector, and runs `before(call number)` (a write arriving while the model works)."""

    def __init__(self, scope, before=None, fail_at: int | None = None):
        super().__init__(384)
        self.scope, self.before, self.fail_at = scope, before, fail_at
        self.seen: list[tuple[set[int], set[int]]] = []

    def embed(self, texts):
        self.seen.append((documented(self.scope), vectored(self.scope)))
        if self.before:
            self.before(len(self.seen))
        if self.fail_at == len(self.seen):
            raise RuntimeError("the worker died")
        return super().embed(texts)


def episode(scope, text: str) -> Episode:
    return Episode.objects.create(scope=scope, text=text, speaker="ada", occurred_at=datetime(2025, 1, 1, tzinfo=UTC))


def documented(scope) -> set[int]:
    return set(SearchDocument.objects.filter(scope=scope, collection=Collection.EPISODE).values_list("target_id", flat=True))


def vectored(scope) -> set[int]:
    documents = dict(SearchDocument.objects.filter(scope=scope, collection=Collection.EPISODE).values_list("pk", "target_id"))
    return {documents[e] for e in Embedding.objects.filter(scope=scope, target_type="doc_episode").values_list("target_id", flat=True)}


def every_document_has_its_vector(scope, model: str) -> bool:
    documents = set(SearchDocument.objects.filter(scope=scope).values_list("pk", flat=True))
    vectors = set(Embedding.objects.filter(scope=scope, model=model, target_type__startswith="doc_").values_list("target_id", flat=True))
    return bool(documents) and documents == vectors


@pytest.fixture(autouse=True)
def model_inline(settings):
    settings.RETRIEVAL_CONCURRENT = False  # `Watching` reads the database: the model must run on the test's thread


@pytest.fixture
def slices(monkeypatch):
    monkeypatch.setattr(indexing, "VECTOR_SLICE", 2)


@pytest.mark.parametrize("run", [index_if_free, index_queued], ids=["runner", "worker"])
def test_a_write_arriving_while_vectors_are_made_is_documented_before_the_rest_of_them(cast, monkeypatch, slices, run):
    scope = cast.scope_a
    first = [episode(scope, f"Standup notes {n}: the deploy moved to Thursday") for n in range(6)]
    late: list[Episode] = []
    embedder = Watching(scope, before=lambda call: late.append(episode(scope, "Ferdinand joined the platform team")) if call == 1 else None)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: embedder)

    run(scope=scope)

    ids = {e.pk for e in first}
    documents, vectors = embedder.seen[0]
    assert documents == ids and not vectors  # every document before the first vector
    assert len(embedder.seen) >= 3  # six documents, two a slice
    documents, vectors = embedder.seen[1]  # after the first slice: the late write's document, before most vectors
    assert late[0].pk in documents and len(vectors & ids) == 2
    assert documented(scope) == vectored(scope) == ids | {late[0].pk}
    assert every_document_has_its_vector(scope, embedder.name)


def test_turns_and_their_windows_all_get_vectors_own_ones_first(cast, monkeypatch, slices, django_capture_on_commit_callbacks):
    scope = cast.scope_a
    messages = [{"id": f"t{n}", "speaker": "Mel" if n % 2 else "Caro", "text": f"Line {n} about the Lisbon offsite",
                 "occurred_at": datetime(2024, 5, 1, 12, n, tzinfo=UTC).isoformat()} for n in range(7)]
    with django_capture_on_commit_callbacks(execute=False):
        ingest_session(scope=scope, session_id="s1", messages=messages, actor=cast.p_owner, enqueue=False)
    embedder = Watching(scope)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: embedder)

    index_if_free(scope=scope)

    assert every_document_has_its_vector(scope, embedder.name)
    # Windows are composed from their turns' vectors (no model pass of their own): seven turns, two a slice.
    assert len(embedder.seen) == 4


def test_a_run_that_dies_between_documents_and_vectors_leaves_nothing_without_a_vector_after_the_next(cast, monkeypatch, slices):
    scope = cast.scope_a
    rows = [episode(scope, f"Budget line {n} approved by Priya") for n in range(5)]
    dying = Watching(scope, fail_at=2)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: dying)
    with pytest.raises(RuntimeError, match="the worker died"):
        index_if_free(scope=scope)
    ids = {e.pk for e in rows}
    assert documented(scope) == ids and 0 < len(vectored(scope)) < len(ids)  # searchable by words; some vectors missing

    healthy = Watching(scope)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: healthy)
    index_if_free(scope=scope)
    assert vectored(scope) == ids and every_document_has_its_vector(scope, healthy.name)


def test_documents_beyond_the_queue_cap_get_their_vectors_from_the_run_s_closing_sweep(cast, monkeypatch, slices):
    scope = cast.scope_a
    monkeypatch.setattr(indexing, "VECTORS_LATER_CAP", 1)
    late: list[Episode] = []
    embedder = Watching(scope, before=lambda call: late.extend(episode(scope, f"Late note {n}") for n in range(3)) if call == 1 else None)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: embedder)
    first = [episode(scope, f"Early note {n}") for n in range(3)]

    index_if_free(scope=scope)

    assert vectored(scope) == {e.pk for e in first + late} and every_document_has_its_vector(scope, embedder.name)


def test_a_bulk_backlog_is_indexed_batch_by_batch(cast, monkeypatch):
    scope = cast.scope_a
    monkeypatch.setattr(indexing, "DOCUMENTS_FIRST_ROWS", 2)
    monkeypatch.setattr(indexing, "_BATCH", 2)
    rows = [episode(scope, f"Import line {n}") for n in range(5)]
    embedder = Watching(scope)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: embedder)

    index_if_free(scope=scope)

    assert embedder.seen[0][0] == set()  # the model's first pass came before any document was written
    assert vectored(scope) == {e.pk for e in rows} and every_document_has_its_vector(scope, embedder.name)


@pytest.fixture
def no_sweeps_yet(monkeypatch):
    monkeypatch.setattr(indexing, "_full_swept_at", {})


def out_of_order(scope) -> tuple[Episode, Episode, Episode]:
    """Three episodes not indexed, the watermark already at the last (as if the two before it had
    committed after a run had moved the mark past them)."""
    far, near, top = (episode(scope, f"Retro note {word}") for word in ("far", "near", "top"))
    IndexState.objects.filter(scope=scope).update(episode_mark=top.pk)
    return far, near, top


def test_between_full_sweeps_a_large_scope_s_run_looks_only_among_recent_ids(cast, monkeypatch, no_sweeps_yet):
    scope = cast.scope_a
    monkeypatch.setattr(indexing, "FULL_SWEEP_DOCUMENTS", 1)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: HashEmbedder(384))
    gone = episode(scope, "A note whose row goes behind the indexer's back")
    index_if_free(scope=scope)  # the scope's first background run: a full sweep
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories_episode WHERE id = %s", [gone.pk])  # no signal: an orphan document
    far, near, top = out_of_order(scope)
    monkeypatch.setattr(indexing, "RECENT_IDS", top.pk - far.pk)  # the anti-join starts just above `far`

    index_if_free(scope=scope)  # within FULL_SWEEP_SECONDS: the recent ids only, no hygiene
    assert documented(scope) == {gone.pk, near.pk, top.pk}

    monkeypatch.setattr(indexing, "FULL_SWEEP_SECONDS", 0.0)
    index_if_free(scope=scope)  # due: the full sweep finds the rest and removes the orphan
    assert documented(scope) == vectored(scope) == {far.pk, near.pk, top.pk}


def test_a_small_scope_s_background_run_is_always_a_full_sweep(cast, monkeypatch, no_sweeps_yet):
    scope = cast.scope_a
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: HashEmbedder(384))
    index_if_free(scope=scope)
    far, near, top = out_of_order(scope)
    monkeypatch.setattr(indexing, "RECENT_IDS", 1)
    index_if_free(scope=scope)
    assert documented(scope) == {far.pk, near.pk, top.pk}


def test_a_failed_run_is_followed_by_a_full_sweep(cast, monkeypatch, no_sweeps_yet):
    scope = cast.scope_a
    monkeypatch.setattr(indexing, "FULL_SWEEP_DOCUMENTS", 1)
    episode(scope, "Kickoff moved to the Porto office")
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: HashEmbedder(384))
    index_if_free(scope=scope)
    far, near, top = out_of_order(scope)
    monkeypatch.setattr(indexing, "RECENT_IDS", top.pk - far.pk)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: Watching(scope, fail_at=1))
    with pytest.raises(RuntimeError, match="the worker died"):
        index_if_free(scope=scope)  # a recent run, which dies making its vectors

    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: HashEmbedder(384))
    index_if_free(scope=scope)
    assert {far.pk, near.pk, top.pk} <= documented(scope) == vectored(scope)


def test_a_write_committed_during_the_sweep_s_hygiene_is_documented_between_its_steps(cast, monkeypatch):
    scope = cast.scope_a
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: HashEmbedder(384))
    episode(scope, "The minibus is booked for the away day")
    late: list[Episode] = []
    rows_gone, embed_missing = indexing._rows_gone, indexing.documents_embed_missing

    def orphans_step(**kwargs):  # the first orphan step: a write arrives meanwhile
        if not late:
            late.append(episode(scope, "Ferdinand joined the platform team"))
        return rows_gone(**kwargs)

    documented_when_vectors_looked_for: list[set[int]] = []

    def missing_step(**kwargs):
        documented_when_vectors_looked_for.append(documented(scope))
        return embed_missing(**kwargs)

    monkeypatch.setattr(indexing, "_rows_gone", orphans_step)
    monkeypatch.setattr(indexing, "documents_embed_missing", missing_step)
    index_if_free(scope=scope)

    assert late and late[0].pk in documented_when_vectors_looked_for[0]  # documented before the hygiene's last step
    assert late[0].pk in vectored(scope) and every_document_has_its_vector(scope, "hash-384")


def test_only_what_was_pending_when_the_run_began_counts_as_a_bulk(cast, monkeypatch, slices):
    """A sweep after a bulk VACUUMs and analyses the documents (`_analyze`); the trickle a
    documents-first run takes in while it makes vectors is no bulk, and under the writers' load
    a VACUUM of the postings held every write behind it for seconds."""
    scope = cast.scope_a
    monkeypatch.setattr(indexing, "BULK_DOCUMENTS", 3)
    analysed: list[int] = []
    monkeypatch.setattr(indexing, "_analyze", lambda: analysed.append(1))
    late: list[Episode] = []
    embedder = Watching(scope, before=lambda call: late.extend(episode(scope, f"Late note {n}") for n in range(4)) if call == 1 else None)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: embedder)
    episode(scope, "The only note pending when the run began")

    index_if_free(scope=scope)
    assert len(late) == 4 and late[-1].pk in vectored(scope) and not analysed

    for n in range(3):
        episode(scope, f"Imported note {n}")
    index_if_free(scope=scope)
    assert analysed == [1]


def test_a_run_takes_in_new_rows_for_a_while_and_then_lets_the_next_run_have_them(cast, monkeypatch, slices):
    """So a Celery worker's run does not hold the scope's lock (and the queued run a worker slot)
    for as long as the writes go on."""
    scope = cast.scope_a
    monkeypatch.setattr(indexing, "TAKE_IN_SECONDS", 0.0)
    late: list[Episode] = []
    embedder = Watching(scope, before=lambda call: late.append(episode(scope, "Ferdinand joined the platform team")) if call == 1 else None)
    monkeypatch.setattr(indexing, "scope_embedder", lambda _scope: embedder)
    first = [episode(scope, f"Standup notes {n}") for n in range(3)]

    index_if_free(scope=scope)
    assert documented(scope) == vectored(scope) == {e.pk for e in first}  # the late write is the next run's

    index_if_free(scope=scope)
    assert documented(scope) == vectored(scope) == {e.pk for e in first + late}
