"""BM25's fast top-k (retrieval/bm25_topk.py, retrieval/packs.py) against the exhaustive ranking,
on a seeded scope of a few hundred turns with known term distributions: words in 60 %, 30 % and
10 % of the turns, and rare ones in two or three. Packs are switched on at this size (they start at
5,000 documents and 1,000 postings a lexeme in production) so that `bm25_top` reads them, as in a
large scope; `bm25_maxscore` (small scopes, narrow windows, a large scope before its packs) is
tested with packs off and on its own."""

import random

import numpy as np
import pytest

from django.db import connection

from accounts.permissions import Principal
from memoryweb.providers.embedders import get_embedder
from memories.services.bulk_ingest import ingest_sessions_bulk
from retrieval import fulltext
from memories.models import Episode, Turn
from retrieval import bm25_topk, packs
from retrieval.bm25_topk import bm25_exact, bm25_maxscore, bm25_top
from retrieval.models import PostingGone, PostingPack, TermStat
from retrieval.fulltext import bm25_candidates, query_lexemes
from retrieval.heal import heal
from retrieval.indexing import index_catch_up, index_pending
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
    monkeypatch.setattr(bm25_topk, "EXHAUSTIVE_BELOW", 0)  # MaxScore even on these few postings, where no pack serves
    monkeypatch.setattr(packs, "PACK_AT", 50)
    monkeypatch.setattr(packs, "PACK_MIN_DF", 8)
    ingest_sessions_bulk(scope=cast.scope_a, sessions=_sessions(random.Random(11), first=0, count=12), actor=Principal(user=cast.owner),
                         enqueue=False)
    index_pending(scope=cast.scope_a, full=True, embedder=get_embedder())
    return cast.scope_a


def assert_same_top_10(scope, questions, *, doc_filter: str = "", params: list | None = None, whole: bool = True) -> int:
    """The fast and exhaustive top 10 (ids, order, scores) for each question, with and without a
    speaker, and from packs the whole list of 50; returns how many read packs."""
    packed = 0
    for question in questions:
        for speaker in ("", "ada"):
            lexemes = query_lexemes(question)
            passes = []
            # A pool of 50 (recall's smallest), its first 10 exact (EXACT_TOP), all 50 from packs.
            fast = bm25_top(scope=scope, lexemes=lexemes, collections=COLLECTIONS, limit=50, speaker=speaker, passes=passes,
                            doc_filter=doc_filter, params=params)
            exact = bm25_exact(scope=scope, lexemes=lexemes, collections=COLLECTIONS, limit=50, speaker=speaker,
                               doc_filter=doc_filter, params=params)
            assert fast and set(fast) == set(exact), (question, speaker)
            as_arrays = bool(passes) and isinstance(passes[0], dict)
            read_packs = as_arrays and passes[0]["packed"] > 0
            for collection in exact:  # the same documents with the same scores, in the same order
                assert top_10(fast[collection], exact[collection]) == top_10(exact[collection], exact[collection]), (question, speaker)
                if as_arrays and whole:
                    assert by_score(fast[collection]) == by_score(exact[collection]), (question, speaker)
            packed += read_packs
    return packed


QUESTIONS = [
    "coffee meeting garden kayak", "coffee kayak", "meeting piano", "coffee meeting", "garden telescope coffee",
    "drone coffee meeting garden", "quilt", "coffee", "mural canoe coffee", "meeting garden treehouse bookshelf",
]


PACKED = 2 * (len(QUESTIONS) - 1)  # with and without a speaker; "quilt" alone is too rare to be packed


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


def by_score(hits: list) -> list:
    """The list as its scores (to nine places) and, per score, the set of documents holding it; the
    last score's documents left out (which of the tied documents fill the last places is a tie)."""
    groups: dict[float, set] = {}
    for hit in hits:
        groups.setdefault(round(hit.score, 9), set()).add(hit.target_id)
    last = round(hits[-1].score, 9) if hits else None
    return [round(h.score, 9) for h in hits], [(score, ids) for score, ids in groups.items() if score != last]


def ids(hits: dict) -> dict:
    return {collection: [h.target_id for h in found[:10]] for collection, found in hits.items()}


def test_packs_rank_as_the_exhaustive_ranking(seeded):
    assert PostingPack.objects.filter(scope=seeded).count() >= 6  # coffee, meeting, garden in two collections at least
    assert assert_same_top_10(seeded, QUESTIONS) == PACKED  # every question with a packed word read packs


def test_documents_far_apart_are_ranked_by_their_ranks(seeded, monkeypatch):
    # Ids spread wide (a scope written over years among others): scored over their ranks, not the span.
    monkeypatch.setattr(packs, "DENSE_SPAN", 0)
    monkeypatch.setattr(packs, "DENSE_PER_POSTING", 0)
    assert assert_same_top_10(seeded, QUESTIONS) == PACKED


def test_without_packs_the_rows_are_ranked_as_arrays(seeded):
    # A large scope before its first packs (or after an erasure): its rows, read whole, exactly.
    PostingPack.objects.filter(scope=seeded).delete()
    passes = []
    bm25_top(scope=seeded, lexemes=query_lexemes("coffee kayak"), collections=COLLECTIONS, limit=50, passes=passes)
    assert passes[0]["packed"] == 0 and passes[0]["postings"] > 0
    assert assert_same_top_10(seeded, QUESTIONS) == 0


def test_below_the_packs_size_maxscore_keeps_the_top_10_exact(seeded, monkeypatch):
    monkeypatch.setattr(packs, "PACK_AT", 10**9)
    assert assert_same_top_10(seeded, QUESTIONS) == 0


def test_few_postings_are_ranked_exhaustively(seeded, monkeypatch):
    monkeypatch.setattr(packs, "PACK_AT", 10**9)
    monkeypatch.setattr(bm25_topk, "EXHAUSTIVE_BELOW", 10**9)
    passes = []
    bm25_top(scope=seeded, lexemes=query_lexemes("coffee kayak"), collections=COLLECTIONS, limit=50, passes=passes)
    assert passes == [query_lexemes("coffee kayak")]  # one read, every lexeme selecting
    assert not assert_same_top_10(seeded, QUESTIONS)


def test_the_fast_top_10_is_exact_under_a_document_filter(seeded, monkeypatch):
    # A time window refusing most documents: the packs' rankings are read against it in small chunks.
    monkeypatch.setattr(packs, "FIRST_SEND", 0.1)
    assert assert_same_top_10(seeded, QUESTIONS, doc_filter="AND retrieval_searchdocument.occurred_at < %(p0)s",
                              params=["2025-05-01T00:00:00Z"])


def test_the_fast_top_10_stays_exact_as_documents_come_and_go(seeded, cast, monkeypatch, django_capture_on_commit_callbacks):
    # The rows after the packs are read beside them, and the scope's average length moves: longer
    # turns (the average triples) and short ones with a common word many times.
    monkeypatch.setattr(packs, "REPACK_SHARE", 10.0)  # no pack is built again: its rows after it are read
    before = {(c, lexeme): n for c, lexeme, n in PostingPack.objects.filter(scope=seeded).values_list("collection", "lexeme", "postings")}
    rng = random.Random(5)
    more = _sessions(rng, first=12, count=4, filler=30)
    # s11 goes on: the windows at its end are rewritten, their packed postings recorded gone.
    more += [(16, {"session_id": "s11", "messages": [
        {"id": str(25 + n), "speaker": "ada", "text": f"coffee meeting garden {rng.choice(RARE)}.", "occurred_at": "2025-03-04T10:00:00Z"}
        for n in range(3)]})]
    more += [(17, {"session_id": "short", "messages": [
        {"id": str(n), "speaker": "bo", "text": " ".join(["coffee"] * (2 + n % 4) + ([rng.choice(RARE)] if n % 3 == 0 else [])),
         "occurred_at": "2025-03-03T10:00:00Z"} for n in range(20)]})]
    ingest_sessions_bulk(scope=seeded, sessions=more, actor=Principal(user=cast.owner), enqueue=False)
    index_pending(scope=seeded, embedder=get_embedder())  # incremental, as after a remember
    after = {(c, lexeme): n for c, lexeme, n in PostingPack.objects.filter(scope=seeded).values_list("collection", "lexeme", "postings")}
    assert {key: after[key] for key in before} == before  # the packs as they were (words newly frequent got theirs)
    assert PostingGone.objects.filter(scope=seeded, collection="turn_w1", lexeme="coffe").exists()
    assert assert_same_top_10(seeded, QUESTIONS) >= PACKED
    monkeypatch.setattr(packs, "REPACK_SHARE", 0.125)
    assert packs.packs_refresh(scope=seeded)  # packed again with what came after
    assert assert_same_top_10(seeded, QUESTIONS) >= PACKED
    # Forget the episodes of the turns at the head of a few rankings: their postings go, the
    # statistics shrink, and what was below them moves up.
    kept = set(PostingPack.objects.filter(scope=seeded).values_list("pk", flat=True))
    heads = set()
    for question in QUESTIONS[:5]:
        exact = bm25_exact(scope=seeded, lexemes=query_lexemes(question), collections=[Collection.TURN], limit=3)
        heads |= {h.target_id for h in exact.get(Collection.TURN, [])}
    for episode in Episode.objects.filter(scope=seeded, turn__in=Turn.objects.filter(pk__in=heads)):
        episode_forget(principal=Principal(user=cast.owner), scope=seeded, episode_public_id=episode.public_id)
    index_pending(scope=seeded, embedder=get_embedder())
    assert not Turn.objects.filter(pk__in=heads).exists()
    # Their packed postings are recorded gone (the triggers), the packs kept and read without them;
    # healing sees the packs due and has the scope indexed, which packs them again and clears them.
    assert PostingPack.objects.get(scope=seeded, collection="turn", lexeme="coffe").pk in kept
    assert PostingGone.objects.filter(scope=seeded, collection="turn", lexeme="coffe").exists()
    assert assert_same_top_10(seeded, QUESTIONS) >= PACKED
    assert packs.packs_due(scope=seeded)
    with django_capture_on_commit_callbacks(execute=True):
        assert heal(scope=seeded).search_indexes == 1
    assert not packs.packs_due(scope=seeded) and heal(scope=seeded).search_indexes == 0
    assert assert_same_top_10(seeded, QUESTIONS) >= PACKED
    # A pack with fewer changes than REPACK_SHARE of it was kept; packing it again clears its gone entries.
    monkeypatch.setattr(packs, "REPACK_SHARE", 0.0)
    assert packs.packs_refresh(scope=seeded)
    assert PostingPack.objects.get(scope=seeded, collection="turn", lexeme="coffe").postings == TermStat.objects.get(
        scope=seeded, collection="turn", lexeme="coffe").df  # every posting in it
    assert not PostingGone.objects.filter(scope=seeded, collection="turn", lexeme="coffe").exists()
    assert assert_same_top_10(seeded, QUESTIONS) >= PACKED


def test_a_question_asked_again_reads_the_packs_held_without_their_arrays(seeded):
    packs._cache.clear()
    for question in QUESTIONS:
        lexemes = query_lexemes(question)
        first, again = [], []
        before = bm25_top(scope=seeded, lexemes=lexemes, collections=COLLECTIONS, limit=50, speaker="ada", passes=first)
        after = bm25_top(scope=seeded, lexemes=lexemes, collections=COLLECTIONS, limit=50, speaker="ada", passes=again)
        assert again[0]["held"] == again[0]["packed"] == first[0]["packed"], question  # every pack from this process's copy
        assert after == before, question
    assert assert_same_top_10(seeded, QUESTIONS) == PACKED


def _meet(scope) -> tuple[dict, list]:
    passes = []
    return bm25_top(scope=scope, lexemes=["meet"], collections=[Collection.TURN], limit=50, passes=passes), passes


def test_a_pack_built_again_is_read_again(seeded):
    # A posting rewritten and its lexeme packed again, in this test's one transaction (a pack's
    # built_at is the clock's, not the transaction's): the copy held is not that pack.
    packs._cache.clear()
    _meet(seeded)
    held, passes = _meet(seeded)
    assert passes[0]["held"] == passes[0]["packed"] == 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT document_id FROM retrieval_posting WHERE scope_id = %s AND collection = 'turn' AND lexeme = 'meet'"
                       " ORDER BY document_id DESC LIMIT 1", [seeded.pk])
        document = cursor.fetchone()[0]
        cursor.execute("UPDATE retrieval_posting SET tf = 7 WHERE document_id = %s AND lexeme = 'meet'", [document])
        cursor.execute(packs.PACK_SQL, [["turn"], ["meet"], seeded.pk])
        cursor.execute("DELETE FROM retrieval_postinggone WHERE scope_id = %s", [seeded.pk])
    fast, passes = _meet(seeded)
    assert passes[0]["held"] == 0 and passes[0]["packed"] == 1  # the arrays were sent again
    exact = bm25_exact(scope=seeded, lexemes=["meet"], collections=[Collection.TURN], limit=50)
    assert by_score(fast["turn"]) == by_score(exact["turn"]) != by_score(held["turn"])
    assert fast["turn"][0].target_id != held["turn"][0].target_id and fast["turn"][0].score > fast["turn"][1].score  # tf 7 leads
    again, passes = _meet(seeded)
    assert passes[0]["held"] == 1 and again == fast


def test_no_pack_is_held_without_a_budget(seeded, settings):
    packs._cache.clear()
    settings.RETRIEVAL_PACK_CACHE_MB = 0
    first, passes = _meet(seeded)
    again, passes = _meet(seeded)
    assert passes[0]["held"] == 0 and passes[0]["packed"] == 1 and again == first


def test_the_packs_held_stay_within_their_budget_least_recently_used_out(settings):
    settings.RETRIEVAL_PACK_CACHE_MB = 1
    cache = packs._PackCache()

    def pack(n: int) -> packs._Packed:  # 28 bytes a posting
        return packs._Packed((n, None, n, n), np.arange(n, dtype=np.int64), np.ones(n), np.ones(n), np.ones(n, dtype=np.int32))

    third = 2**20 // 3 // 28  # postings: a third of the budget
    for lexeme in "abc":
        cache.put((1, "turn", lexeme), pack(third))
    assert cache.get((1, "turn", "a")) is not None  # used: now the most recent
    cache.put((1, "turn", "d"), pack(third))
    assert cache.get((1, "turn", "b")) is None and all(cache.get((1, "turn", x)) is not None for x in "acd")
    cache.put((2, "turn", "e"), pack(2**20 // 28 + 1))  # larger than the whole budget: not held
    assert cache.get((2, "turn", "e")) is None and cache.get((1, "turn", "d")) is not None
    with pytest.raises(ValueError):
        cache.get((1, "turn", "a")).documents[0] = 5  # shared by every question: read-only
    cache.clear(scope=1)
    assert all(cache.get((1, "turn", x)) is None for x in "acd")


def test_a_statement_deleting_or_updating_packed_postings_records_them_gone(seeded):
    packed = set(PostingPack.objects.filter(scope=seeded).values_list("collection", "lexeme"))
    assert ("turn", "coffe") in packed and ("turn", "meet") in packed
    with connection.cursor() as cursor:
        cursor.execute("SELECT document_id FROM retrieval_posting WHERE scope_id = %s AND collection = 'turn' AND lexeme = 'meet'"
                       " ORDER BY document_id LIMIT 1", [seeded.pk])
        document = cursor.fetchone()[0]
        cursor.execute("SELECT array_agg(lexeme) FROM retrieval_posting WHERE document_id = %s", [document])
        lexemes = set(cursor.fetchone()[0])
        # A rewritten posting (tf 1 → 7): its row is read instead of the pack's entry.
        cursor.execute("UPDATE retrieval_posting SET tf = 7 WHERE document_id = %s AND lexeme = 'meet'", [document])
        assert set(PostingGone.objects.filter(scope=seeded).values_list("lexeme", "document_id")) == {("meet", document)}
        fast = bm25_top(scope=seeded, lexemes=["meet"], collections=[Collection.TURN], limit=50)
        exact = bm25_exact(scope=seeded, lexemes=["meet"], collections=[Collection.TURN], limit=50)
        assert by_score(fast["turn"]) == by_score(exact["turn"])
        assert fast["turn"][0].score > fast["turn"][1].score  # the tf-7 posting leads: its row was read
        cursor.execute("DELETE FROM retrieval_posting WHERE document_id = %s", [document])
    assert set(PostingGone.objects.filter(scope=seeded).values_list("collection", "lexeme", "document_id")) == {
        ("turn", lexeme, document) for lexeme in lexemes if ("turn", lexeme) in packed}
    assert set(PostingPack.objects.filter(scope=seeded).values_list("collection", "lexeme")) == packed  # the packs stay


def test_an_erasure_drops_the_scope_packs(seeded, cast):
    from retrieval.erase import subject_erase
    from memories.models import Entity

    Entity.objects.create(scope=seeded, name="Ada", kind="person")
    assert assert_same_top_10(seeded, QUESTIONS) == PACKED
    assert any(key[0] == seeded.pk for key in packs._cache._entries)
    subject_erase(principal=Principal(user=cast.owner), scope=seeded, subject="Ada")
    assert not PostingPack.objects.filter(scope=seeded).exists() and not PostingGone.objects.filter(scope=seeded).exists()
    assert not any(key[0] == seeded.pk for key in packs._cache._entries)  # nor copies of them in this process
    assert packs.packs_due(scope=seeded)


def test_recall_catch_up_leaves_packing_to_the_index_task(seeded, cast, monkeypatch):
    # Recall waits for its catch-up: it indexes the new rows, which are then read after the packs.
    monkeypatch.setattr(packs, "REPACK_SHARE", 0.0)  # any change would make a pack due
    before = dict(PostingPack.objects.filter(scope=seeded).values_list("id", "postings"))
    ingest_sessions_bulk(scope=seeded, sessions=_sessions(random.Random(8), first=20, count=1), actor=Principal(user=cast.owner),
                         enqueue=False)
    assert index_catch_up(scope=seeded, embedder=get_embedder()).caught_up
    assert dict(PostingPack.objects.filter(scope=seeded).values_list("id", "postings")) == before
    assert packs.packs_due(scope=seeded)
    assert assert_same_top_10(seeded, QUESTIONS) == PACKED


def test_a_pack_that_does_not_add_up_is_not_used(seeded):
    # A posting written below a pack's last document (not by the indexer, which writes in id order)
    # is not among the rows read after the pack: the count check sees it and the rows are read.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.id, d.length, d.speaker FROM retrieval_searchdocument d WHERE d.scope_id = %s AND d.collection = 'turn'"
            " AND NOT EXISTS (SELECT 1 FROM retrieval_posting p WHERE p.document_id = d.id AND p.lexeme = 'garden') ORDER BY d.id LIMIT 1",
            [seeded.pk],
        )
        document, length, speaker = cursor.fetchone()
        cursor.execute("INSERT INTO retrieval_posting (scope_id, collection, lexeme, document_id, tf, length, speaker)"
                       " VALUES (%s, 'turn', 'garden', %s, 9, %s, %s)", [seeded.pk, document, length, speaker])
        cursor.execute("UPDATE retrieval_termstat SET df = df + 1 WHERE scope_id = %s AND collection = 'turn' AND lexeme = 'garden'",
                       [seeded.pk])
    assert PostingPack.objects.filter(scope=seeded, collection="turn", lexeme="garden").exists()
    fast = bm25_top(scope=seeded, lexemes=["garden"], collections=[Collection.TURN], limit=50)
    exact = bm25_exact(scope=seeded, lexemes=["garden"], collections=[Collection.TURN], limit=50)
    assert [(h.target_id, h.score) for h in fast["turn"]] == [(h.target_id, h.score) for h in exact["turn"]]
    assert fast["turn"][0].score > fast["turn"][1].score  # the tf-9 posting leads: it was read


def test_the_rows_after_a_pack_are_one_range_of_the_lookup_index(seeded):
    with connection.cursor() as cursor:
        # With the statistics a scope of this size has (the planner otherwise takes the table for
        # empty and may read by the document index alone).
        cursor.execute("ANALYZE retrieval_posting")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT p.document_id, p.tf, p.length, p.speaker FROM retrieval_posting p WHERE p.scope_id = %s"
            " AND p.collection = 'turn' AND p.lexeme = 'coffe' AND p.document_id > 0",
            [seeded.pk],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    # The document bound is a condition of the index scan, not a filter on what it read.
    assert "retr_posting_lookup_idx" in plan and "Filter" not in plan and "document_id > 0" in plan, plan


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
