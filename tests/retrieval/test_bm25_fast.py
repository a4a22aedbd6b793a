"""BM25's fast top-k (retrieval/bm25_topk.py) against the exhaustive ranking, on a seeded scope
of a few hundred turns with known term distributions: words in 60 %, 30 % and 10 % of the turns,
and rare ones in two or three. The common-terms rule is switched on at this size (it starts at
5,000 documents in production) so that the common words stop selecting."""

import random

import pytest

from accounts.permissions import Principal
from memoryweb.providers.embedders import get_embedder
from memories.services.bulk_ingest import ingest_sessions_bulk
from retrieval import fulltext
from retrieval.bm25_topk import bm25_exact, bm25_top
from retrieval.fulltext import bm25_candidates, query_lexemes
from retrieval.indexing import index_pending
from retrieval.models import Collection

COMMON = {"coffee": 0.6, "meeting": 0.3, "garden": 0.1}
RARE = "kayak piano telescope aquarium sculpture quilt caravan mural drone bookshelf canoe treehouse".split()
FILLER = "blue quick small window river yellow table chair".split()
COLLECTIONS = [Collection.TURN, Collection.TURN_W1]


@pytest.fixture
def seeded(cast, monkeypatch):
    monkeypatch.setattr(fulltext, "COMMON_TERM_MIN_DOCS", 50)
    rng = random.Random(11)
    sessions = []
    for s in range(12):
        messages = []
        for n in range(25):
            words = [w for w, share in COMMON.items() if rng.random() < share] + rng.sample(FILLER, 3)
            if rng.random() < 0.12:
                words.append(rng.choice(RARE))
            words += [rng.choice(("coffee", "meeting"))] * rng.randrange(0, 3)  # tf above one here and there
            rng.shuffle(words)
            messages.append({"id": str(n), "speaker": rng.choice(("ada", "bo")), "text": " ".join(words) + ".",
                             "occurred_at": f"2025-0{1 + s % 9}-1{n % 9}T10:00:00Z"})
        sessions.append((s + 1, {"session_id": f"s{s}", "messages": messages}))
    ingest_sessions_bulk(scope=cast.scope_a, sessions=sessions, actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=cast.scope_a, full=True, embedder=get_embedder())
    return cast.scope_a


QUESTIONS = [
    "coffee meeting garden kayak", "coffee kayak", "meeting piano", "coffee meeting", "garden telescope coffee",
    "drone coffee meeting garden", "quilt", "coffee", "mural canoe coffee", "meeting garden treehouse bookshelf",
]


def ids(hits: dict) -> dict:
    return {collection: [h.target_id for h in found[:10]] for collection, found in hits.items()}


def test_the_fast_top_10_is_the_exhaustive_top_10(seeded):
    one_pass = 0
    for question in QUESTIONS:
        for speaker in ("", "ada"):
            lexemes = query_lexemes(question)
            passes = []
            # A pool of 50 (recall's smallest), its first 10 exact (EXACT_TOP).
            fast = bm25_top(scope=seeded, lexemes=lexemes, collections=COLLECTIONS, limit=50, speaker=speaker, passes=passes)
            exact = bm25_exact(scope=seeded, lexemes=lexemes, collections=COLLECTIONS, limit=50, speaker=speaker)
            assert ids(fast) == ids(exact) and fast, (question, speaker)
            for collection in exact:  # the scores too, not only the order
                assert [round(h.score, 9) for h in fast[collection][:10]] == [round(h.score, 9) for h in exact[collection][:10]]
            one_pass += len(passes) == 1 and len(passes[0]) < len(lexemes)
    assert one_pass  # some questions were answered without the common words selecting


def test_common_words_stop_selecting_where_the_bound_allows_and_not_elsewhere(seeded):
    # A rare word with common ones: the common words' bound stays below the 2nd score, so one
    # pass selected by the rare word is exact.
    passes = []
    bm25_top(scope=seeded, lexemes=query_lexemes("coffee meeting kayak"), collections=[Collection.TURN], limit=2, passes=passes)
    assert passes == [query_lexemes("kayak")]
    # Asked for more exact places than the rare word has documents, the threshold is 0 and every
    # word selects: the plain common-terms rule would have returned only the rare word's documents.
    lexemes = query_lexemes("coffee kayak")
    passes = []
    fast = bm25_top(scope=seeded, lexemes=lexemes, collections=[Collection.TURN], limit=60, passes=passes, exact=60)
    rule = bm25_candidates(scope=seeded, lexemes=lexemes, collections=[Collection.TURN], limit=60)
    exact = bm25_exact(scope=seeded, lexemes=lexemes, collections=[Collection.TURN], limit=60)
    assert len(passes) == 2 and set(passes[-1]) == set(lexemes)
    assert ids(fast) == ids(exact) and len(rule["turn"]) < len(exact["turn"]) == 60
