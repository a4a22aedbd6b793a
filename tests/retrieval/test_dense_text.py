"""What the vectors are made from: a turn's of what was said (no date label, no speaker's name;
retrieval/documents.py: vector_text), the question's without the speakers' names
(retrieval/search/question.py: dense_query), both chosen by cross-validation (retrieval/cv.py)."""

from datetime import UTC, datetime

import pytest

from memoryweb.providers.embedders import get_embedder
from memories.models import Embedding
from memories.services.ingest import ingest_session
from retrieval.documents import vector_text
from retrieval.indexing import MAX_SPEAKERS, index_pending
from retrieval.models import Collection, SearchDocument
from retrieval.search import candidates, recall_evidence
from retrieval.search.candidates import QueryVectors
from retrieval.search.question import dense_text, question_read

SPEAKERS = ("Caroline", "Melanie", "Ada Lovelace")


def test_the_questions_vector_leaves_out_the_speakers_full_and_first_names_and_their_possessive():
    assert dense_text(text="What is Caroline's identity?", speakers=SPEAKERS) == "What is identity?"
    assert dense_text(text="How do Melanie and Caroline destress?", speakers=SPEAKERS) == "How do and destress?"
    assert dense_text(text="What did Ada Lovelace think of Ada’s work?", speakers=SPEAKERS) == "What did think of work?"


def test_only_whole_names_as_written_go_and_a_question_of_names_only_stays_whole():
    assert dense_text(text="Did Carolines or Mel paint?", speakers=SPEAKERS) == "Did Carolines or Mel paint?"
    assert dense_text(text="Will Ada come?", speakers=("Will",)) == "Ada come?"
    assert dense_text(text="What will Ada do?", speakers=("Will",)) == "What will Ada do?"  # the verb, not the name
    assert dense_text(text="Caroline?", speakers=SPEAKERS) == "Caroline?"


def test_asked_or_too_many_speakers_keep_the_question(settings):
    many = tuple(f"Speaker{i}" for i in range(MAX_SPEAKERS + 1)) + ("Caroline",)
    assert dense_text(text="What did Caroline paint?", speakers=many) == "What did Caroline paint?"
    settings.RETRIEVAL_DENSE_QUERY = "asked"
    assert dense_text(text="What did Caroline paint?", speakers=SPEAKERS) == "What did Caroline paint?"


def test_a_turns_vector_text_drops_its_date_label_and_speaker_and_a_windows_is_its_document(settings):
    turn = "[8 May 2023] Caroline: Thanks, Mel! [shares a photo: a sunset]"
    assert vector_text(collection=Collection.TURN, text=turn, speaker="Caroline") == "Thanks, Mel! [shares a photo: a sunset]"
    window = "[8 May 2023] Melanie: Hi\nCaroline: Thanks, Mel!"
    assert vector_text(collection=Collection.TURN_W1, text=window, speaker="Caroline") == window  # composed from its turns'
    episode = "[8 May 2023] Caroline: I moved to Madrid."
    assert vector_text(collection=Collection.EPISODE, text=episode, speaker="Caroline") == "I moved to Madrid."
    assert vector_text(collection=Collection.FACT, text="Caroline: likes painting", speaker="Caroline") == "Caroline: likes painting"
    settings.RETRIEVAL_TURN_VECTOR_TEXT = "document"
    assert vector_text(collection=Collection.TURN, text=turn, speaker="Caroline") == turn


MESSAGES = [
    {"id": "d1", "speaker": "Caroline", "text": "I went to a support group yesterday.", "occurred_at": "2023-05-08T13:56:00+00:00"},
    {"id": "d2", "speaker": "Melanie", "text": "That sounds powerful, Caroline.", "occurred_at": "2023-05-08T13:57:00+00:00"},
]


def stored_turn_vector(scope, external_id):
    doc = SearchDocument.objects.get(scope=scope, collection=Collection.TURN, target_id__in=scope.turns.filter(external_id=external_id).values("pk"))
    return doc, [float(v) for v in Embedding.objects.get(target_type="doc_turn", target_id=doc.pk).vec]


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["said", "document"])
def test_a_turn_is_embedded_from_its_vector_text_and_searched_by_its_document(cast, settings, mode):
    settings.RETRIEVAL_TURN_VECTOR_TEXT = mode
    scope = cast.scope_a
    ingest_session(scope=scope, session_id="s1", messages=MESSAGES, actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope, full=True)
    doc, vector = stored_turn_vector(scope, "d1")
    assert doc.text == "[8 May 2023] Caroline: I went to a support group yesterday."  # BM25 still sees who and when
    said = "I went to a support group yesterday." if mode == "said" else doc.text
    assert vector == pytest.approx(get_embedder().embed([said])[0], abs=1e-6)


@pytest.mark.django_db
def test_recall_embeds_the_unnamed_question(cast, monkeypatch):
    scope = cast.scope_a
    ingest_session(scope=scope, session_id="s1", messages=MESSAGES, actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope, full=True)
    embedder = get_embedder()
    asked: list[str] = []
    original = type(embedder).embed
    monkeypatch.setattr(type(embedder), "embed", lambda self, texts: asked.extend(texts) or original(self, texts))
    result = recall_evidence(scope=scope, query="Where did Caroline go?", filters={"kinds": ["turn"]},
                             now=datetime(2023, 6, 1, tzinfo=UTC))
    assert asked == ["Where did go?"]
    assert result.items[0].source["turn"] == "d1"  # BM25 and the speaker boost still see "Caroline"
    q = question_read(scope=scope, query="Where did Caroline go?", filters=None, as_of=None, include_history=False, now=None, speaker="")
    assert set(q.speakers) == {"Caroline", "Melanie"}



class _Recording:
    def __init__(self):
        self.name, self.dim, self.calls = "hash-384", 384, []

    def embed(self, texts):
        self.calls.append(list(texts))
        return get_embedder().embed(texts)


@pytest.mark.parametrize(("kinds", "embedded"), [
    (("fact", "episode", "turn"), [["Where did Caroline go?", "Where did go?"]]),
    (("turn",), [["Where did go?"]]),
    (("fact",), [["Where did Caroline go?"]]),
])
def test_each_kind_is_searched_with_the_question_made_as_its_documents_were(kinds, embedded):
    """A fact's vector holds its subject's name ("Caroline: Caroline lives in Paris"), a turn's no
    speaker: facts are searched with the question as asked, the conversation without the names,
    both in one model call, and only the ones the kinds need."""
    embedder = _Recording()
    vectors = QueryVectors.embed(embedder, asked="Where did Caroline go?", unnamed="Where did go?", kinds=kinds)
    assert embedder.calls == embedded
    plain = get_embedder()
    if "fact" in kinds:
        assert vectors.for_collection(Collection.FACT) == plain.embed(["Where did Caroline go?"])[0]
    if "turn" in kinds:
        assert vectors.for_collection(Collection.TURN) == plain.embed(["Where did go?"])[0]
        assert vectors.for_collection(Collection.TURN_W2) == plain.embed(["Where did go?"])[0]


@pytest.mark.django_db(transaction=True)
def test_recall_searches_facts_with_the_asked_vector_and_turns_with_the_unnamed_one(cast, monkeypatch):
    scope = cast.scope_a
    ingest_session(scope=scope, session_id="s1", messages=MESSAGES, actor=cast.p_owner, enqueue=False)
    index_pending(scope=scope, full=True)
    plain = get_embedder()
    searched: dict[str, list[float]] = {}
    original = candidates.vector_candidates

    def recording(**kwargs):
        for collection in kwargs["collections"]:
            searched[collection] = kwargs["query_vector"]
        return original(**kwargs)

    monkeypatch.setattr(candidates, "vector_candidates", recording)
    monkeypatch.setattr(candidates, "vector_search_exact", lambda **_: True)
    from memories.models import Entity, Fact
    subject = Entity.objects.create(scope=scope, name="Caroline", kind="person")
    Fact.objects.create(scope=scope, subject=subject, attribute="lives_in", value="Paris", value_normalized="paris",
                        sentence="Caroline lives in Paris.")
    index_pending(scope=scope)
    recall_evidence(scope=scope, query="Where did Caroline go?", now=datetime(2023, 6, 1, tzinfo=UTC))
    assert searched[Collection.FACT] == plain.embed(["Where did Caroline go?"])[0]
    assert searched[Collection.TURN] == plain.embed(["Where did go?"])[0]
