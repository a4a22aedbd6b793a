"""A question's time window as the search applies it: counted first, a window that holds nothing
not searched at all, a narrow one searched by its documents' postings alone (the same hits as
reading every matching document), and the postings made all-visible after a bulk index run."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from retrieval import indexing
from retrieval.fulltext import bm25_candidates, query_lexemes
from retrieval.indexing import index_pending
from retrieval.models import Collection
from retrieval.search import eligibility
from retrieval.search.eligibility import document_filter, window_documents, window_postings
from retrieval.search.question import Question
from retrieval.services import recall
from retrieval.temporal import TimeWindow
from tests.retrieval.test_search import NOW, at, fact, note, person

pytestmark = pytest.mark.django_db

MARCH_2025 = TimeWindow(datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 4, 1, tzinfo=UTC), "March 2025")
ALL = [Collection.FACT, Collection.EPISODE]


def _bm25_statements(queries) -> int:
    return sum("WITH scored" in q["sql"] for q in queries)


@pytest.fixture(autouse=True)
def _moments_narrowed(settings):
    """These tests are about narrowing episodes and documents by when they were said, which a
    question's time words do under RETRIEVAL_TIME_WINDOWS=all (the default narrows facts only)."""
    settings.RETRIEVAL_TIME_WINDOWS = "all"


@pytest.fixture
def dinners(cast):
    """Episodes about dinner across 2024 and 2025 (three in March 2025), and facts that match too."""
    scope = cast.scope_a
    made = {
        "march_a": note(scope, "dinner with Sam at the harbour", when=at(2025, 3, 10)),
        "march_b": note(scope, "dinner with Sam and Ada, dinner again soon", when=at(2025, 3, 20)),
        "march_c": note(scope, "a quiet dinner at home", when=at(2025, 3, 28)),
        "april": note(scope, "dinner with Sam at the station, dinner dinner", when=at(2025, 4, 2)),
        "last_year": note(scope, "dinner with Sam in the old flat", when=at(2024, 3, 10)),
        "undated": note(scope, "dinner plans with Sam", when=None),
    }
    sam = person(scope, "Sam")
    made["fact_now"] = fact(scope, sam, "likes", "dinner", "Sam likes dinner parties", at(2024, 1, 1))
    made["fact_old"] = fact(scope, sam, "likes", "brunch", "Sam liked dinner at noon", at(2020, 1, 1), valid_to=at(2025, 2, 1),
                            status="superseded")
    index_pending(scope=scope)
    return scope, made


def _question(scope, window, *, as_of=None, history=False):
    return Question(scope=scope, text="dinner with Sam", now=NOW, window=window, as_of=as_of, history=history, changes=False,
                    kinds=("fact", "episode"))


@pytest.mark.parametrize(("window", "as_of", "history"), [
    (MARCH_2025, None, False),
    (MARCH_2025, None, True),
    (TimeWindow(None, datetime(2025, 3, 15, tzinfo=UTC), "before 15 March 2025"), None, True),
    (TimeWindow(datetime(2025, 3, 15, tzinfo=UTC), None, "since 15 March 2025"), datetime(2025, 3, 25, tzinfo=UTC), True),
    (TimeWindow(None, None, "any time"), None, False),
], ids=["march", "march-history", "before", "since-as-of", "open"])
def test_a_narrow_windows_postings_give_the_hits_reading_every_document_gives(dinners, window, as_of, history):
    scope, _ = dinners
    q = _question(scope, window, as_of=as_of, history=history)
    doc_filter, params = document_filter(q)
    lexemes = query_lexemes(q.text)
    plain = bm25_candidates(scope=scope, lexemes=lexemes, collections=ALL, limit=50, doc_filter=doc_filter, params=params)
    narrowed = bm25_candidates(scope=scope, lexemes=lexemes, collections=ALL, limit=50, doc_filter=doc_filter, params=params,
                               posting_filter=window_postings(q))
    assert plain  # the question matches something in each case
    assert {c: [(h.target_id, round(h.score, 9)) for h in hits] for c, hits in narrowed.items()} == \
           {c: [(h.target_id, round(h.score, 9)) for h in hits] for c, hits in plain.items()}


def test_the_posting_filter_alone_keeps_the_windows_episodes_and_every_fact(dinners):
    scope, made = dinners
    q = _question(scope, MARCH_2025)
    hits = bm25_candidates(scope=scope, lexemes=query_lexemes(q.text), collections=ALL, limit=50, posting_filter=window_postings(q))
    names = {pk: name for name, row in made.items() for pk in [row.pk]}
    assert {names[h.target_id] for h in hits[Collection.EPISODE]} == {"march_a", "march_b", "march_c"}
    assert {names[h.target_id] for h in hits[Collection.FACT]} == {"fact_now", "fact_old"}  # facts go by the document filter


def test_window_documents_counts_up_to_the_cap_and_a_fact_once(dinners, monkeypatch):
    scope, _ = dinners
    assert window_documents(_question(scope, MARCH_2025), [Collection.EPISODE]) == 3
    assert window_documents(_question(scope, MARCH_2025), ALL) == 4  # the active fact held in March
    empty = TimeWindow(datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC), "in 2023")
    assert window_documents(_question(scope, empty), [Collection.EPISODE]) == 0
    monkeypatch.setattr(eligibility, "WINDOW_PREFILTER_MAX", 2)
    assert window_documents(_question(scope, MARCH_2025), [Collection.EPISODE]) == 2


def test_a_window_that_holds_nothing_is_not_searched_and_its_results_come_from_outside_it(dinners):
    scope, made = dinners
    with CaptureQueriesContext(connection) as queries:
        result = recall(scope=scope, query="dinner with Sam in 2023", now=NOW, k=3, filters={"kinds": ["episode"]})
    assert result.window.phrase == "in 2023"
    assert len(result.items) == 3
    assert all(any("outside the time window (in 2023)" in w for w in item.why) for item in result.items)
    assert _bm25_statements(queries) == 1  # the search outside the window only
    with CaptureQueriesContext(connection) as queries:
        held = recall(scope=scope, query="dinner with Sam in March 2025", now=NOW, k=5, filters={"kinds": ["episode"]})
    assert _bm25_statements(queries) == 2  # three in the window, the rest from outside it
    assert {i.pk for i in held.items[:3]} == {made["march_a"].pk, made["march_b"].pk, made["march_c"].pk}
    assert not any("outside" in w for i in held.items[:3] for w in i.why)
    assert all(any("outside the time window" in w for w in i.why) for i in held.items[3:])


def test_a_wide_window_is_searched_by_reading_documents_in_score_order(dinners, monkeypatch):
    """Above the cap the posting filter is not used, and the window's results are the same."""
    scope, _ = dinners
    narrow = recall(scope=scope, query="dinner with Sam in March 2025", now=NOW, k=3, filters={"kinds": ["episode"]})
    monkeypatch.setattr(eligibility, "WINDOW_PREFILTER_MAX", 2)
    from retrieval.search import pipeline
    monkeypatch.setattr(pipeline, "WINDOW_PREFILTER_MAX", 2)
    with CaptureQueriesContext(connection) as queries:
        wide = recall(scope=scope, query="dinner with Sam in March 2025", now=NOW, k=3, filters={"kinds": ["episode"]})
    assert not any("WITH scored" in q["sql"] and "p.document_id IN (SELECT w.id" in q["sql"] for q in queries)
    assert [(i.pk, round(i.score, 9)) for i in wide.items] == [(i.pk, round(i.score, 9)) for i in narrow.items]


@pytest.mark.django_db(transaction=True)
def test_a_bulk_index_run_vacuums_the_documents_and_postings(cast, monkeypatch):
    """Outside a transaction, a full run that wrote BULK_DOCUMENTS documents VACUUMs (so BM25's
    index-only scans of the postings need not visit the table); a smaller one does not."""
    monkeypatch.setattr(indexing, "BULK_DOCUMENTS", 4)

    def vacuums() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute("SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'retrieval_posting'")
            return cursor.fetchone()[0]

    scope = cast.scope_a
    before = vacuums()
    for i in range(5):
        note(scope, f"dinner number {i} with Sam", when=at(2025, 3, i + 1))
    assert index_pending(scope=scope) == 5
    assert vacuums() == before + 1
    note(scope, "one more dinner", when=at(2025, 3, 9))
    assert index_pending(scope=scope, full=True) == 1
    assert vacuums() == before + 1


@pytest.mark.django_db(transaction=True)
def test_the_vacuum_leaves_a_table_another_vacuum_holds_and_does_not_wait(cast, monkeypatch):
    """SKIP_LOCKED: a lock that conflicts with VACUUM (another VACUUM's, held here by hand) makes the
    indexer skip the table rather than wait for it."""
    from django.db import connections

    monkeypatch.setattr(indexing, "BULK_DOCUMENTS", 4)
    other = connections.create_connection("default")
    try:
        other.set_autocommit(False)
        with other.cursor() as cursor:
            cursor.execute("LOCK TABLE retrieval_posting IN SHARE UPDATE EXCLUSIVE MODE")
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = '20s'")  # waiting would fail the test, not hang it
        for i in range(5):
            note(cast.scope_a, f"dinner number {i} with Sam", when=at(2025, 3, i + 1))
        assert index_pending(scope=cast.scope_a) == 5
    finally:
        other.rollback()
        other.close()
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = 0")
