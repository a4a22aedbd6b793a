"""Index hygiene (retrieval/signals.py, retrieval/indexing.py: deleted_rows_unindex,
orphans_remove): a fact, episode or turn deleted outside forgetting and erasure takes its
documents, postings and vectors with it, and the term statistics end as a fresh build of the
rows that are left would make them."""

from datetime import UTC, datetime

import pytest
from django.db import connection, transaction

from memories.models import Embedding, Episode, Fact, Session, Turn
from memories.services.ingest import ingest_session, remember
from retrieval.indexing import index_pending
from retrieval.models import Collection, CorpusStat, Posting, SearchDocument, TermStat
from tests.retrieval.test_forget import index_snapshot as documents_snapshot
from tests.retrieval.test_forget import rebuild

pytestmark = pytest.mark.django_db

MESSAGES = [
    {"id": "t1", "speaker": "Melanie", "text": "How was your week, Caroline?"},
    {"id": "t2", "speaker": "Caroline", "text": "I live in Lisbon these days."},
    {"id": "t3", "speaker": "Melanie", "text": "Do you still like the city?"},
    {"id": "t4", "speaker": "Caroline", "text": "I adopted a ferret called Zanzibar in Quokkaville."},
    {"id": "t5", "speaker": "Melanie", "text": "That sounds lovely, ferrets are playful."},
    {"id": "t6", "speaker": "Caroline", "text": "Next week I visit my parents."},
]


@pytest.fixture
def talk(cast, django_capture_on_commit_callbacks):
    """Two sessions, a free-standing note and the facts the offline extractor finds, indexed."""
    scope = cast.scope_a
    for session, day in (("s1", 1), ("s2", 20)):
        messages = [{**m, "id": f"{session}{m['id']}", "occurred_at": datetime(2024, 5, day + n, 12, tzinfo=UTC).isoformat()}
                    for n, m in enumerate(MESSAGES)]
        with django_capture_on_commit_callbacks(execute=True):
            ingest_session(scope=scope, session_id=session, messages=messages, actor=cast.p_owner)
    with django_capture_on_commit_callbacks(execute=True):
        remember(scope=scope, text="Quokkaville has a fine harbour", speaker="Melanie", actor=cast.p_owner)
    index_pending(scope=scope, full=True)
    return cast


def index_snapshot(scope):
    """Statistics, documents and postings (as forgetting's tests compare them), and which documents have vectors."""
    return documents_snapshot(scope) + (
        sorted(
            (d.collection, d.target_id) for d in SearchDocument.objects.filter(scope=scope)
            if Embedding.objects.filter(target_type=f"doc_{d.collection}", target_id=d.pk).exists()
        ),
        Embedding.objects.filter(scope=scope).count(),
    )


def documents_of(scope, collections, target_id):
    return SearchDocument.objects.filter(scope=scope, collection__in=collections, target_id=target_id)


def test_deleting_a_turn_a_fact_an_episode_and_a_session_takes_them_out_of_the_index(talk, django_capture_on_commit_callbacks):
    scope = talk.scope_a
    turn = Turn.objects.get(scope=scope, external_id="s1t4")
    fact = Fact.objects.filter(scope=scope, supersedes__isnull=True, superseded_by__isnull=True).order_by("id").first()
    note = Episode.objects.get(scope=scope, turn__isnull=True)
    turn_docs = list(documents_of(scope, ["turn", "turn_w1", "turn_w2"], turn.pk).values_list("id", flat=True))
    assert len(turn_docs) == 3 and documents_of(scope, ["fact"], fact.pk).exists()  # the test can fail
    assert Embedding.objects.filter(target_type__startswith="doc_", target_id__in=turn_docs).count() == 3
    harbour = TermStat.objects.get(scope=scope, collection="episode", lexeme="harbour")
    assert harbour.df == 1

    with django_capture_on_commit_callbacks(execute=True):
        turn.delete()  # its episode cascades
    with django_capture_on_commit_callbacks(execute=True):
        Fact.objects.filter(pk=fact.pk).delete()
    with django_capture_on_commit_callbacks(execute=True):
        note.delete()
    s2 = list(Turn.objects.filter(scope=scope, session__external_id="s2").values_list("id", flat=True))
    assert documents_of(scope, ["turn"], s2[0]).exists()
    with django_capture_on_commit_callbacks(execute=True):
        Session.objects.filter(scope=scope, external_id="s2").delete()  # its turns and episodes cascade

    assert not documents_of(scope, ["turn", "turn_w1", "turn_w2"], turn.pk).exists()
    assert not Posting.objects.filter(document_id__in=turn_docs).exists()
    assert not Embedding.objects.filter(target_type__startswith="doc_", target_id__in=turn_docs).exists()
    assert not documents_of(scope, ["fact"], fact.pk).exists()
    assert not TermStat.objects.filter(scope=scope, collection="episode", lexeme="harbour").exists()
    assert not SearchDocument.objects.filter(scope=scope, collection__in=["turn", "turn_w1", "turn_w2"], target_id__in=s2).exists()
    # The neighbours' windows no longer hold the turn's text.
    assert not SearchDocument.objects.filter(scope=scope, collection__in=["turn_w1", "turn_w2"], text__contains="Zanzibar").exists()
    unindexed = index_snapshot(scope)
    rebuild(scope)
    assert unindexed == index_snapshot(scope)


def test_the_sweep_removes_what_raw_deletes_left_and_corrects_the_statistics(talk):
    scope = talk.scope_a
    fact = Fact.objects.filter(scope=scope, supersedes__isnull=True, superseded_by__isnull=True).order_by("id").first()
    note = Episode.objects.get(scope=scope, turn__isnull=True)
    turn = Turn.objects.get(scope=scope, external_id="s1t2")
    with connection.cursor() as cursor:  # no signal: the sweep has to find these
        cursor.execute("DELETE FROM memories_factsupport WHERE fact_id = %s", [fact.pk])
        cursor.execute("DELETE FROM memories_fact WHERE id = %s", [fact.pk])
        cursor.execute("DELETE FROM memories_mention WHERE episode_id = %s", [note.pk])
        cursor.execute("DELETE FROM memories_episode WHERE id = %s", [note.pk])
    # A document removed behind the indexer's back: its postings cascade, the statistics stay.
    SearchDocument.objects.filter(scope=scope, collection=Collection.TURN, target_id=turn.pk).delete()
    assert documents_of(scope, ["fact"], fact.pk).exists()  # the test can fail
    assert CorpusStat.objects.get(scope=scope, collection="turn").doc_count == 12

    index_pending(scope=scope, full=True)

    assert not documents_of(scope, ["fact"], fact.pk).exists() and not documents_of(scope, ["episode"], note.pk).exists()
    assert documents_of(scope, ["turn"], turn.pk).exists()  # written again by the sweep
    swept = index_snapshot(scope)
    rebuild(scope)
    assert swept == index_snapshot(scope)


def test_a_rolled_back_delete_leaves_the_index_alone(talk, django_capture_on_commit_callbacks):
    scope = talk.scope_a
    turn = Turn.objects.get(scope=scope, external_id="s1t4")
    kept = sorted(SearchDocument.objects.filter(scope=scope).exclude(collection="episode").values_list("id", "text"))
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            turn.delete()
            raise RuntimeError("rolled back")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        Episode.objects.get(scope=scope, turn__isnull=True).delete()  # this commit also takes the rolled-back note
    assert callbacks and Turn.objects.filter(scope=scope, external_id="s1t4").exists()
    assert not SearchDocument.objects.filter(scope=scope, collection="episode").exists()
    assert sorted(SearchDocument.objects.filter(scope=scope).exclude(collection="episode").values_list("id", "text")) == kept
