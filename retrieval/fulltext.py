"""BM25 in PostgreSQL over a scope's search documents.

A question is turned into an OR of its lexemes (PostgreSQL's `english` configuration: stemmed,
stop words dropped, and question scaffolding such as "would" or "kind of" dropped as words
before stemming). AND semantics (`websearch_to_tsquery`) find no document at all for most
natural-language questions, and `ts_rank` has neither idf nor length normalisation, so the
score is Okapi BM25 (Robertson & Zaragoza 2009) computed in SQL from the document's tsvector
(term frequency = number of positions), the scope's document frequencies (TermStat) and the
collection's size and average length (CorpusStat). Scores are summed from `Posting` rows (an
inverted index: lexeme → document, tf, length) read through one btree, so a query touches only
the (lexeme, document) pairs it matches.

Rows not indexed yet (recall does not wait for the index task, retrieval/indexing.py) are
matched on their raw text instead: `unindexed_candidates`, a bounded scan of the newest of them.
"""

import math
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from memories.models import Scope
from retrieval.indexing import Backlog
from retrieval.intents import words

# Words that shape a question without saying what it is about; dropped as words (before
# stemming, so "likely" goes but "like" stays). PostgreSQL's stop list already drops
# what/which/who/when/where/why/how, the auxiliaries and the pronouns.
QUESTION_WORDS = frozenset(
    "would could might likely ever kind type many much also please tell know remember think".split()
)


@dataclass(frozen=True)
class Hit:
    collection: str
    target_id: int
    score: float


def query_lexemes(query: str) -> list[str]:
    """The query's distinct lexemes in PostgreSQL's `english` normal form, in order of appearance."""
    kept = [w for w in words(query) if w.lower() not in QUESTION_WORDS]
    if not kept:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme FROM unnest(to_tsvector('english', %s)) u ORDER BY u.positions[1]", [" ".join(kept)]
        )
        return list(dict.fromkeys(row[0] for row in cursor.fetchall()))


# In a large collection, a lexeme found in more than this share of the documents (df/N) does not
# select documents, it only scores those the rarer lexemes select (Lucene's "common terms"
# idea): a document matching only common words would rank low anyway, and matching them means
# scoring a large part of the scope on every query.
COMMON_TERM_SHARE = 0.05
COMMON_TERM_MIN_DOCS = 5000


@dataclass(frozen=True)
class _Weights:
    """What BM25 needs besides the postings, read once per query and passed in as arrays (joined
    inside the query, the statistics hide from the planner how many postings a lexeme has):
    per collection `k1·(1 − b)` and `k1·b / avgdl`, per (collection, lexeme) `idf·(k1 + 1)` in
    a flat matrix, the document frequencies in the same layout, and which lexemes select documents."""

    collections: list[str]
    lexemes: list[str]
    idfs: list[float]  # [collection index × len(lexemes) + lexeme index]
    k_const: list[float]
    k_length: list[float]
    selecting: list[str]
    dfs: list[int]  # [collection index × len(lexemes) + lexeme index], 0 where absent
    doc_counts: list[int] = field(default_factory=list)  # per collection


def _weights(scope: Scope, lexemes: list[str], collections: list[str]) -> _Weights | None:
    """The BM25 statistics of `lexemes` in `collections` (None: no lexeme occurs in them)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.collection, c.doc_count, c.total_length, t.lexeme, t.df FROM retrieval_corpusstat c"
            " JOIN retrieval_termstat t ON t.scope_id = c.scope_id AND t.collection = c.collection"
            " WHERE c.scope_id = %s AND c.collection = ANY(%s) AND c.doc_count > 0 AND t.lexeme = ANY(%s) AND t.df > 0",
            [scope.pk, list(collections), lexemes],
        )
        rows = cursor.fetchall()
    if not rows:
        return None
    k1, b = settings.RETRIEVAL_BM25_K1, settings.RETRIEVAL_BM25_B
    present_collections = [c for c in collections if any(row[0] == c for row in rows)]
    present = [lexeme for lexeme in lexemes if any(row[3] == lexeme for row in rows)]
    cells = len(present_collections) * len(present)
    weights = _Weights(present_collections, present, [0.0] * cells, [], [], [], [0] * cells)
    common = set()
    for collection in present_collections:
        doc_count, total_length = next((row[1], row[2]) for row in rows if row[0] == collection)
        weights.doc_counts.append(doc_count)
        weights.k_const.append(k1 * (1 - b))
        weights.k_length.append(k1 * b / ((total_length / doc_count) or 1.0))
    for collection, doc_count, _, lexeme, df in rows:
        at = present_collections.index(collection) * len(present) + present.index(lexeme)
        weights.idfs[at] = math.log(1 + (doc_count - df + 0.5) / (df + 0.5)) * (k1 + 1)
        weights.dfs[at] = df
        if doc_count >= COMMON_TERM_MIN_DOCS and df / doc_count > COMMON_TERM_SHARE:
            common.add(lexeme)
    weights.selecting.extend([lexeme for lexeme in present if lexeme not in common] or present)
    return weights


bm25_weights = _weights


def bm25_candidates(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "", posting_filter: tuple[str, dict] = ("", {}), weights: "_Weights | None" = None,
    selecting: list[str] | None = None,
) -> dict[str, list[Hit]]:
    """The top `limit` documents per collection by BM25, best first.

    `doc_filter` is an extra SQL condition on the document, the table `retrieval_searchdocument`
    (time windows, fact status), with its `params` (`%(p0)s`, `%(p1)s`, …); it is applied inside
    the query so the pool is filled with eligible documents.
    `speaker`: the one speaker the question names; their documents' scores are multiplied by
    1 + RETRIEVAL_SPEAKER_BOOST ("what did Caroline paint?" is about what Caroline said).
    `posting_filter`: a condition on the posting `p`, with its named parameters, that `doc_filter`
    implies (a narrow time window's documents): the postings of documents it leaves out are not
    scored, and those documents not read one by one only to be rejected.
    `weights`: `bm25_weights`' for these lexemes and collections, when the caller read them;
    `selecting`: the lexemes that select documents, instead of the common-terms rule's
    (`weights.selecting`); the others only score what these select (retrieval/bm25_topk.py
    chooses them so that the top `limit` stay exact).
    """
    if not lexemes or not collections:
        return {}
    weights = weights or _weights(scope, lexemes, collections)
    if weights is None:
        return {}  # no query lexeme occurs in these collections
    chosen = weights.selecting if selecting is None else [lexeme for lexeme in weights.lexemes if lexeme in selecting]
    selecting = ""
    if set(chosen) != set(weights.lexemes):
        # Common lexemes do not select documents (their postings are many): they only score the
        # documents the rarer ones select.
        selecting = (
            " AND p.document_id IN (SELECT s.document_id FROM retrieval_posting s WHERE s.scope_id = %(scope)s"
            " AND s.collection = ANY(%(collections)s) AND s.lexeme = ANY(%(selecting)s))"
        )
    boost = " * CASE WHEN bool_or(q.speaker = %(speaker)s) THEN 1 + %(boost)s ELSE 1 END" if speaker else ""
    # Every matched document is scored from its postings alone (the speaker boost included), then
    # documents are read in score order, per collection, until `limit` pass `doc_filter`
    # (`scored_top`): the filter is paid for the few documents that make the list, not for every
    # document that shares a word with the query.
    sql = f"""
        WITH scored AS MATERIALIZED (
            SELECT q.document_id, min(q.ci) AS ci,
                   sum((%(idfs)s::float8[])[(q.ci - 1) * %(lexeme_count)s + q.li] * q.tf
                       / (q.tf + (%(k_const)s::float8[])[q.ci] + (%(k_length)s::float8[])[q.ci] * q.length)){boost} AS score
            FROM (
                SELECT p.document_id, p.tf, p.length, p.speaker,
                       array_position(%(collections)s::text[], p.collection::text) AS ci,
                       array_position(%(lexemes)s::text[], p.lexeme) AS li
                FROM retrieval_posting p
                WHERE p.scope_id = %(scope)s AND p.collection = ANY(%(collections)s) AND p.lexeme = ANY(%(lexemes)s){posting_filter[0]}{selecting}
            ) q
            GROUP BY q.document_id
        )
        {scored_top(doc_filter)}
    """
    named = {
        "scope": scope.pk, "collections": weights.collections, "lexemes": weights.lexemes, "selecting": chosen,
        "idfs": weights.idfs, "lexeme_count": len(weights.lexemes), "k_const": weights.k_const, "k_length": weights.k_length,
        "limit": limit, "speaker": speaker, "boost": settings.RETRIEVAL_SPEAKER_BOOST,
    }
    named.update(posting_filter[1])
    for index, value in enumerate(params or []):
        named[f"p{index}"] = value
    out: dict[str, list[Hit]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, named)
        for collection, _, target_id, score in cursor.fetchall():
            out.setdefault(collection, []).append(Hit(collection, target_id, float(score)))
    for hits in out.values():
        hits.sort(key=lambda hit: -hit.score)  # stable: equal scores keep the query's order
    return out


def scored_top(doc_filter: str, limit: str = "%(limit)s") -> str:
    """SQL after a CTE `scored` (document_id, ci, score): per collection of `%(collections)s` (ci its
    position), the documents best first (ties by id), the first `limit` that pass `doc_filter` (a
    condition on `retrieval_searchdocument`): rows (collection, document_id, target_id, score). The
    filter costs a visit per document, so it is paid for the few documents that make the list; the
    LATERAL join runs as a nested loop over the sorted scores, which keeps their order."""
    return f"""
        SELECT c.collection, top.document_id, top.target_id, top.score
        FROM unnest(%(collections)s::text[]) WITH ORDINALITY AS c(collection, ci)
        CROSS JOIN LATERAL (
            SELECT s.document_id, d.target_id, s.score
            FROM (SELECT document_id, score FROM scored WHERE scored.ci = c.ci ORDER BY score DESC, document_id) s
            CROSS JOIN LATERAL (
                SELECT target_id FROM retrieval_searchdocument WHERE retrieval_searchdocument.id = s.document_id {doc_filter}
            ) d
            LIMIT {limit}
        ) top
    """


# How many of the newest un-indexed rows per table are matched on their raw text: the
# tsvector is computed on the fly, so the scan is bounded; a backlog larger than this is
# the index task's to make searchable.
UNINDEXED_SCAN = 2000


def unindexed_candidates(*, scope: Scope, lexemes: list[str], collections: list[str], backlog: Backlog, limit: int) -> dict[str, list[Hit]]:
    """Rows above the index's watermarks (`backlog`) that share a
    lexeme with the query, by their raw text: the facts, free-standing episodes and turns (as
    `Collection.TURN`) not searchable through the index yet, most lexemes matched first, then
    the newest. Scored by matched lexemes only: they have no postings or vectors to rank by."""
    if not lexemes or not backlog.pending:
        return {}
    parts, params = [], {"scope": scope.pk, "lexemes": lexemes, "scan": UNINDEXED_SCAN, "limit": limit}
    tables = {
        "fact": "SELECT f.id, e.name || ': ' || f.sentence AS body FROM memories_fact f JOIN memories_entity e ON e.id = f.subject_id"
                " WHERE f.scope_id = %(scope)s AND f.id > %(fact_mark)s ORDER BY f.id DESC LIMIT %(scan)s",
        "episode": "SELECT id, speaker || ': ' || text AS body FROM memories_episode"
                   " WHERE scope_id = %(scope)s AND id > %(episode_mark)s AND turn_id IS NULL ORDER BY id DESC LIMIT %(scan)s",
        "turn": "SELECT id, speaker || ': ' || text AS body FROM memories_turn"
                " WHERE scope_id = %(scope)s AND id > %(turn_mark)s ORDER BY id DESC LIMIT %(scan)s",
    }
    marks = {"fact": backlog.fact_mark, "episode": backlog.episode_mark, "turn": backlog.turn_mark}
    for collection, rows in tables.items():
        if collection in collections:
            params[f"{collection}_mark"] = marks[collection]
            parts.append(
                f"SELECT '{collection}' AS collection, r.id, cardinality(ARRAY(SELECT unnest(tsvector_to_array(to_tsvector('english', r.body)))"
                f" INTERSECT SELECT unnest(%(lexemes)s::text[]))) AS matched FROM ({rows}) r"
            )
    if not parts:
        return {}
    sql = f"SELECT collection, id, matched FROM ({' UNION ALL '.join(parts)}) u WHERE matched > 0 ORDER BY matched DESC, id DESC LIMIT %(limit)s"
    out: dict[str, list[Hit]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for collection, target_id, matched in cursor.fetchall():
            out.setdefault(collection, []).append(Hit(collection, target_id, float(matched)))
    return out
