"""BM25's fast top-k (retrieval/bm25_topk.py) against the exhaustive ranking, on a seeded scope
of a few hundred turns with known term distributions: words in 60 %, 30 % and 10 % of the turns,
and rare ones in two or three. The common-terms rule is switched on at this size (it starts at
5,000 documents in production) so that `bm25_top` takes the impact-ordered path, as in a large
scope; `bm25_maxscore` (small scopes, narrow windows) is tested on its own."""

import random

import pytest

from django.db import connection

from accounts.permissions import Principal
from memoryweb.providers.embedders import get_embedder
from memories.services.bulk_ingest import ingest_sessions_bulk
from retrieval import fulltext
from memories.models import Episode, Turn
from retrieval import bm25_topk
from retrieval.bm25_topk import bm25_exact, bm25_maxscore, bm25_top
from retrieval.fulltext import bm25_candidates, query_lexemes
from retrieval.indexing import index_pending
from retrieval.models import Collection
from retrieval.services import episode_forget

COMMON = {"coffee": 0.6, "meeting": 0.3, "garden": 0.1}
RARE = "kayak piano telescope aquarium sculpture quilt caravan mural drone bookshelf canoe treehouse".split()
FILLER = "blue quick small window river yellow table chair".split()
COLLECTIONS = [Collection.TURN, Collection.TURN_W1]


def _sessions(rng: random.Random, *, first: int, count: int, filler: int = 3) -> list:
    sessions = []
    for s in range(first, first + count):
        messages = []
        for n in range(25):
            words = [w for w, share in COMMON.items() if rng.random() < share] + (rng.sample(FILLER, filler) if filler <= len(FILLER) else [rng.choice(FILLER) for _ in range(filler)])
            if rng.random() < 0.12:
                words.append(rng.choice(RARE))
            words += [rng.choice(("coffee", "meeting"))] * rng.randrange(0, 3)  # tf above one here and there
            rng.shuffle(words)
            messages.append({"id": str(n), "speaker": rng.choice(("ada", "bo")), "text": " ".join(words) + ".",
                             "occurred_at": f"2025-0{1 + s % 9}-1{n % 9}T10:00:00Z"})
        sessions.append((s + 1, {"session_id": f"s{s}", "messages": messages}))
    return sessions


@pytest.fixture
def seeded(cast, monkeypatch):
    monkeypatch.setattr(fulltext, "COMMON_TERM_MIN_DOCS", 50)
    monkeypatch.setattr(bm25_topk, "EXHAUSTIVE_BELOW", 0)  # the two phases even on these few postings
    ingest_sessions_bulk(scope=cast.scope_a, sessions=_sessions(random.Random(11), first=0, count=12), actor=Principal(user=cast.owner),
                         enqueue=False)
    index_pending(scope=cast.scope_a, full=True, embedder=get_embedder())
    return cast.scope_a


def assert_same_top_10(scope, questions, *, doc_filter: str = "", params: list | None = None) -> int:
    """The fast and exhaustive top 10 (ids, order, scores) for each question, with and without a
    speaker; returns how many took the two-phase path with some lexeme not selecting."""
    saved = 0
    for question in questions:
        for speaker in ("", "ada"):
            lexemes = query_lexemes(question)
            passes = []
            # A pool of 50 (recall's smallest), its first 10 exact (EXACT_TOP).
            fast = bm25_top(scope=scope, lexemes=lexemes, collections=COLLECTIONS, limit=50, speaker=speaker, passes=passes,
                            doc_filter=doc_filter, params=params)
            exact = bm25_exact(scope=scope, lexemes=lexemes, collections=COLLECTIONS, limit=50, speaker=speaker,
                               doc_filter=doc_filter, params=params)
            assert fast and set(fast) == set(exact), (question, speaker)
            for collection in exact:  # the same documents with the same scores, in the same order
                assert top_10(fast[collection], exact[collection]) == top_10(exact[collection], exact[collection]), (question, speaker)
            if passes and isinstance(passes[-1], dict) and len(passes[-1]["selecting"]) < passes[-1]["cells"]:
                saved += 1
    return saved


QUESTIONS = [
    "coffee meeting garden kayak", "coffee kayak", "meeting piano", "coffee meeting", "garden telescope coffee",
    "drone coffee meeting garden", "quilt", "coffee", "mural canoe coffee", "meeting garden treehouse bookshelf",
]


def top_10(hits: list, exact: list) -> list:
    """The first ten as (score, id), ties at a score by id. Equal scores may differ in their last bit
    (terms added in another order), which orders tied documents differently: scores are compared to
    nine places, and a document tied at the tenth score may stand for another one the exhaustive list
    holds at that score (which of them makes the tenth place is a tie)."""
    first = sorted(((round(h.score, 9), h.target_id) for h in hits[:10]), key=lambda x: (-x[0], x[1]))
    if len(first) < 10:
        return first
    tenth = first[-1][0]
    tied = sorted(h.target_id for h in exact if round(h.score, 9) == tenth)
    above = [x for x in first if x[0] > tenth]
    return above + [(tenth, f"one of {tied}")] * (10 - len(above)) if {x[1] for x in first[len(above):]} <= set(tied) else first


def ids(hits: dict) -> dict:
    return {collection: [h.target_id for h in found[:10]] for collection, found in hits.items()}


@pytest.fixture(params=["probe", "scan"])
def scoring(request, monkeypatch):
    """Both ways of scoring the selected documents: from their tsvectors, or from the postings."""
    monkeypatch.setattr(bm25_topk, "PROBE_COST", 0 if request.param == "probe" else 10**9)
    return request.param


def test_the_fast_top_10_is_the_exhaustive_top_10(seeded, scoring):
    assert assert_same_top_10(seeded, QUESTIONS)


def test_few_postings_are_ranked_exhaustively(seeded, monkeypatch):
    monkeypatch.setattr(bm25_topk, "EXHAUSTIVE_BELOW", 10**9)
    assert not assert_same_top_10(seeded, QUESTIONS)  # the same lists, and no question took the two phases  # some questions were answered without reading every posting


def test_the_fast_top_10_is_exact_under_a_document_filter(seeded, scoring):
    # The threshold comes from documents that pass the filter (a time window here).
    assert assert_same_top_10(seeded, QUESTIONS, doc_filter="AND retrieval_searchdocument.occurred_at < %(p0)s",
                              params=["2025-05-01T00:00:00Z"])


def test_the_fast_top_10_stays_exact_as_documents_come_and_go(seeded, cast, scoring):
    # The index's key is the posting's own (no bound stored beside it), but the scope's average
    # length moves: longer turns (the average triples) and short ones with a common word many times.
    rng = random.Random(5)
    more = _sessions(rng, first=12, count=4, filler=30)
    more += [(17, {"session_id": "short", "messages": [
        {"id": str(n), "speaker": "bo", "text": " ".join(["coffee"] * (2 + n % 4) + ([rng.choice(RARE)] if n % 3 == 0 else [])),
         "occurred_at": "2025-03-03T10:00:00Z"} for n in range(20)]})]
    ingest_sessions_bulk(scope=seeded, sessions=more, actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=seeded, embedder=get_embedder())  # incremental, as after a remember
    assert assert_same_top_10(seeded, QUESTIONS)
    # Forget the episodes of the turns at the head of a few rankings: their postings go, the
    # statistics shrink, and what was below them moves up.
    heads = set()
    for question in QUESTIONS[:5]:
        exact = bm25_exact(scope=seeded, lexemes=query_lexemes(question), collections=[Collection.TURN], limit=3)
        heads |= {h.target_id for h in exact.get(Collection.TURN, [])}
    for episode in Episode.objects.filter(scope=seeded, turn__in=Turn.objects.filter(pk__in=heads)):
        episode_forget(principal=Principal(user=cast.owner), scope=seeded, episode_public_id=episode.public_id)
    index_pending(scope=seeded, embedder=get_embedder())
    assert not Turn.objects.filter(pk__in=heads).exists()
    assert assert_same_top_10(seeded, QUESTIONS)


def test_the_impact_index_serves_the_best_first_read(seeded):
    # The query repeats the index's expression (IMPACT_KEY, migration 0010): if the two texts drift
    # apart the planner reads the table instead, which is correct but slow.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            f"EXPLAIN SELECT p.document_id FROM retrieval_posting p WHERE p.scope_id = %s AND p.collection = 'turn'"
            f" AND p.lexeme = 'coffe' ORDER BY {bm25_topk.IMPACT_KEY} LIMIT 5",
            [seeded.pk],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "retr_posting_impact_idx" in plan and "Sort" not in plan, plan


def test_common_words_stop_selecting_where_the_bound_allows_and_not_elsewhere(seeded):
    # The MaxScore path (small scopes, narrow windows). A rare word with common ones: the common
    # words' bound stays below the 2nd score, so one pass selected by the rare word is exact.
    passes = []
    bm25_maxscore(scope=seeded, lexemes=query_lexemes("coffee meeting kayak"), collections=[Collection.TURN], limit=2, passes=passes)
    assert passes == [query_lexemes("kayak")]
    # Asked for more exact places than the rare word has documents, the threshold is 0 and every
    # word selects: the plain common-terms rule would have returned only the rare word's documents.
    lexemes = query_lexemes("coffee kayak")
    passes = []
    fast = bm25_maxscore(scope=seeded, lexemes=lexemes, collections=[Collection.TURN], limit=60, passes=passes, exact=60)
    rule = bm25_candidates(scope=seeded, lexemes=lexemes, collections=[Collection.TURN], limit=60)
    exact = bm25_exact(scope=seeded, lexemes=lexemes, collections=[Collection.TURN], limit=60)
    assert len(passes) == 2 and set(passes[-1]) == set(lexemes)
    assert ids(fast) == ids(exact) and len(rule["turn"]) < len(exact["turn"]) == 60
