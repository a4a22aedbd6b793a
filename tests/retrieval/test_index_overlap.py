"""Indexing embeds a batch's texts on another thread while its documents, statistics and postings
are written (retrieval/indexing.py: sync_documents). The vectors are the ones a model pass after
the writes would make; when the model fails, the documents are still committed and searchable by
text, and the next run gives them their vectors. Postings have no constraint in the database, so
every way a document or a scope goes must take its postings with it."""

import threading
from datetime import UTC, datetime

import pytest
from django.db import connection

from memories.models import Embedding, Scope
from memories.services.ingest import ingest_session
from memoryweb.providers.embedders import HashEmbedder
from retrieval import indexing
from retrieval.indexing import documents_erase, index_pending, scope_lock_for_transaction
from retrieval.models import Collection, Posting, SearchDocument

pytestmark = pytest.mark.django_db

MESSAGES = [
    {"id": "t1", "speaker": "Melanie", "text": "How was your week, Caroline?"},
    {"id": "t2", "speaker": "Caroline", "text": "I adopted a ferret called Zanzibar."},
    {"id": "t3", "speaker": "Melanie", "text": "Ferrets are playful, I hear."},
    {"id": "t4", "speaker": "Caroline", "text": "Next week I visit my parents in Lisbon."},
]


class Recording(HashEmbedder):
    """The hash embedder, noting the thread each call ran on; `fail` makes every call raise."""

    def __init__(self, *, fail: bool = False):
        super().__init__(384)
        self.threads: list[str] = []
        self.fail = fail

    def embed(self, texts):
        self.threads.append(threading.current_thread().name)
        if self.fail:
            raise RuntimeError("the model crashed")
        return super().embed(texts)


def ingest(scope, actor, django_capture_on_commit_callbacks):
    messages = [{**m, "occurred_at": datetime(2024, 5, 1, 12, n, tzinfo=UTC).isoformat()} for n, m in enumerate(MESSAGES)]
    with django_capture_on_commit_callbacks(execute=False):
        ingest_session(scope=scope, session_id="s1", messages=messages, actor=actor, enqueue=False)


def vectors_of(scope: Scope) -> dict[tuple[str, str], list[float]]:
    """The scope's document vectors by (collection, document text), comparable across scopes."""
    documents = {d.pk: (d.collection, d.text) for d in SearchDocument.objects.filter(scope=scope)}
    return {documents[e.target_id]: [round(float(v), 5) for v in e.vec]
            for e in Embedding.objects.filter(scope=scope, target_type__startswith="doc_")}


def test_the_model_runs_beside_the_writes_and_its_vectors_are_a_plain_pass(cast, django_capture_on_commit_callbacks, settings):
    settings.RETRIEVAL_CONCURRENT = True
    ingest(cast.scope_a, cast.p_owner, django_capture_on_commit_callbacks)
    beside = Recording()
    index_pending(scope=cast.scope_a, embedder=beside)
    assert beside.threads and all(name != threading.current_thread().name for name in beside.threads)

    settings.RETRIEVAL_CONCURRENT = False  # `soon` then runs the pass on this thread, before the writes
    ingest(cast.scope_a2, cast.p_owner, django_capture_on_commit_callbacks)
    inline = Recording()
    index_pending(scope=cast.scope_a2, embedder=inline)
    assert inline.threads == [threading.current_thread().name]
    overlapped = vectors_of(cast.scope_a)
    assert overlapped == vectors_of(cast.scope_a2)
    assert {c for c, _ in overlapped} == {Collection.TURN, Collection.TURN_W1, Collection.TURN_W2}
    assert Embedding.objects.filter(scope=cast.scope_a).count() == 3 * len(MESSAGES)  # each turn and its two windows


def test_a_model_failure_leaves_the_documents_committed_and_the_next_run_embeds_them(cast, django_capture_on_commit_callbacks, settings):
    ingest(cast.scope_a, cast.p_owner, django_capture_on_commit_callbacks)
    settings.RETRIEVAL_CONCURRENT = True
    with pytest.raises(RuntimeError, match="the model crashed"):
        index_pending(scope=cast.scope_a, embedder=Recording(fail=True))
    documents = SearchDocument.objects.filter(scope=cast.scope_a)
    assert documents.filter(collection=Collection.TURN).count() == len(MESSAGES)
    assert Posting.objects.filter(scope=cast.scope_a, lexeme="zanzibar").exists()  # findable by text already
    assert not Embedding.objects.filter(scope=cast.scope_a).exists()

    index_pending(scope=cast.scope_a, embedder=Recording())
    embedded = set(Embedding.objects.filter(scope=cast.scope_a).values_list("target_id", flat=True))
    assert embedded == set(documents.values_list("pk", flat=True)) and len(embedded) == 3 * len(MESSAGES)


def test_postings_go_with_their_documents_and_their_scope(cast, django_capture_on_commit_callbacks):
    ingest(cast.scope_a, cast.p_owner, django_capture_on_commit_callbacks)
    index_pending(scope=cast.scope_a, embedder=Recording())
    scope = cast.scope_a
    turn = SearchDocument.objects.filter(scope=scope, collection=Collection.TURN).first()
    SearchDocument.objects.filter(pk=turn.pk).delete()  # the ORM's cascade, with no constraint to lean on
    assert not Posting.objects.filter(document_id=turn.pk).exists()

    window = SearchDocument.objects.filter(scope=scope).exclude(collection=Collection.TURN).first()
    scope_lock_for_transaction(scope)
    assert documents_erase(scope=scope, doc_ids=[window.pk])["postings"] > 0
    assert not Posting.objects.filter(document_id=window.pk).exists()

    assert Posting.objects.filter(scope=scope).exists()
    Scope.objects.filter(pk=scope.pk).delete()
    assert not Posting.objects.filter(scope_id=scope.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_large_write_into_the_graph_goes_over_two_connections_and_keeps_every_vector(cast, settings, monkeypatch):
    """`_store`: a write of GRAPH_SPLIT_ROWS or more vectors that go into the HNSW graph is halved
    over two backends; every document still gets exactly its one vector, in the graph, the same as
    a build that writes them on one connection."""
    settings.RETRIEVAL_EXACT_BELOW = 4  # the scope outgrows exact search at once: its vectors go into the graph
    monkeypatch.setattr(indexing, "GRAPH_SPLIT_ROWS", 8)
    backends: list[int] = []
    real = indexing.vectors_write

    def noting_the_backend(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backends.append(cursor.fetchone()[0])
        return real(**kwargs)

    monkeypatch.setattr(indexing, "vectors_write", noting_the_backend)
    messages = [{"id": f"t{n}", "speaker": ("Melanie", "Caroline")[n % 2], "text": f"Turn {n}: {MESSAGES[n % 4]['text']}",
                 "occurred_at": datetime(2024, 5, 1, 12, n, tzinfo=UTC).isoformat()} for n in range(12)]
    built = {}
    for scope, concurrent in ((cast.scope_a, True), (cast.scope_a2, False)):
        settings.RETRIEVAL_CONCURRENT = concurrent
        backends.clear()
        ingest_session(scope=scope, session_id="s1", messages=messages, actor=cast.p_owner, enqueue=False)
        index_pending(scope=scope, embedder=HashEmbedder(384))
        assert len(set(backends)) == (2 if concurrent else 1), backends
        vectors = Embedding.objects.filter(scope=scope, target_type__startswith="doc_")
        assert sorted(vectors.values_list("target_id", flat=True)) == sorted(SearchDocument.objects.filter(scope=scope).values_list("pk", flat=True))
        assert vectors.count() == 3 * len(messages) and not vectors.filter(deferred=True).exists()
        built[concurrent] = vectors_of(scope)
    assert built[True] == built[False]
