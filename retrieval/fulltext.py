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
"""

import math
import re
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from memories.models import Scope

# Words that shape a question without saying what it is about; dropped as words (before
# stemming, so "likely" goes but "like" stays). PostgreSQL's stop list already drops
# what/which/who/when/where/why/how, the auxiliaries and the pronouns.
QUESTION_WORDS = frozenset(
    "would could might likely ever kind type many much also please tell know remember think".split()
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    collection: str
    target_id: int
    score: float


def query_lexemes(query: str) -> list[str]:
    """The query's distinct lexemes in PostgreSQL's `english` normal form, in order of appearance."""
    words = [w for w in _WORD.findall(query) if w.lower() not in QUESTION_WORDS]
    if not words:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme FROM unnest(to_tsvector('english', %s)) u ORDER BY u.positions[1]", [" ".join(words)]
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
    """What BM25 needs besides the postings, read once per query: each (collection, lexeme)'s
    idf with its collection's average length, and which lexemes select documents."""

    collections: list[str]
    lexemes: list[str]
    idfs: list[float]
    avgdls: list[float]
    selecting: list[str]


def _weights(scope: Scope, lexemes: list[str], collections: list[str]) -> _Weights | None:
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
    weights = _Weights([], [], [], [], [])
    common = set()
    for collection, doc_count, total_length, lexeme, df in rows:
        weights.collections.append(collection)
        weights.lexemes.append(lexeme)
        weights.idfs.append(math.log(1 + (doc_count - df + 0.5) / (df + 0.5)))
        weights.avgdls.append(total_length / doc_count or 1.0)
        if doc_count >= COMMON_TERM_MIN_DOCS and df / doc_count > COMMON_TERM_SHARE:
            common.add(lexeme)
    present = list(dict.fromkeys(weights.lexemes))
    weights.selecting.extend([lexeme for lexeme in present if lexeme not in common] or present)
    return weights


def bm25_candidates(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "",
) -> dict[str, list[Hit]]:
    """The top `limit` documents per collection by BM25, best first.

    `doc_filter` is an extra SQL condition on the document `d` (time windows, fact status) with
    its `params`; it is applied inside the query so the pool is filled with eligible documents.
    `speaker`: the one speaker the question names; their documents' scores are multiplied by
    1 + RETRIEVAL_SPEAKER_BOOST ("what did Caroline paint?" is about what Caroline said).
    """
    if not lexemes or not collections:
        return {}
    k1, b = settings.RETRIEVAL_BM25_K1, settings.RETRIEVAL_BM25_B
    weights = _weights(scope, lexemes, collections)
    if weights is None:
        return {}  # no query lexeme occurs in these collections
    # The statistics are passed in as arrays: joined inside the query, the planner cannot know
    # how many postings a lexeme has and picks plans that are slow for common ones.
    if set(weights.selecting) == set(weights.lexemes):
        postings = (
            "retrieval_posting p WHERE p.scope_id = %(scope)s AND p.collection = ANY(%(collections)s)"
            " AND p.lexeme = ANY(%(lexemes)s)"
        )
    else:
        # Common lexemes are not scanned (their postings are many): the documents the rarer ones
        # select are probed for them through the document index instead.
        postings = (
            "(SELECT DISTINCT s.document_id FROM retrieval_posting s WHERE s.scope_id = %(scope)s"
            " AND s.collection = ANY(%(collections)s) AND s.lexeme = ANY(%(selecting)s)) sel"
            " JOIN retrieval_posting p ON p.document_id = sel.document_id AND p.lexeme = ANY(%(lexemes)s)"
        )
    # Every matched document is scored from its postings alone (the speaker boost included), then
    # documents are read in score order, per collection, until `limit` pass `doc_filter`: the
    # filter (fact status, time window) costs a visit per document, so it is paid for the few
    # documents that make the list, not for every document that shares a word with the query.
    # The LATERAL join runs as a nested loop over the sorted scores, which keeps their order.
    sql = f"""
        WITH w AS (
            SELECT * FROM unnest(%(w_collections)s::text[], %(w_lexemes)s::text[], %(w_idfs)s::float8[], %(w_avgdls)s::float8[])
                AS w(collection, lexeme, idf, avgdl)
        ), scored AS MATERIALIZED (
            SELECT p.document_id, min(p.collection) AS collection,
                   sum(w.idf * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / w.avgdl)))
                   * CASE WHEN min(p.speaker) = %(speaker)s THEN 1 + %(boost)s ELSE 1 END AS score
            FROM (SELECT p.document_id, p.collection, p.lexeme, p.tf, p.length, p.speaker FROM {postings}) p
            JOIN w ON w.collection = p.collection AND w.lexeme = p.lexeme
            GROUP BY p.document_id
        )
        SELECT c.collection, top.target_id, top.score FROM unnest(%(collections)s::text[]) AS c(collection)
        CROSS JOIN LATERAL (
            SELECT d.target_id, s.score
            FROM (SELECT document_id, score FROM scored WHERE scored.collection = c.collection
                  ORDER BY score DESC, document_id) s
            CROSS JOIN LATERAL (
                SELECT d.target_id FROM retrieval_searchdocument d WHERE d.id = s.document_id {doc_filter}
            ) d
            LIMIT %(limit)s
        ) top
    """
    named = {
        "scope": scope.pk, "collections": list(collections), "lexemes": list(dict.fromkeys(weights.lexemes)),
        "selecting": weights.selecting, "w_collections": weights.collections, "w_lexemes": weights.lexemes,
        "w_idfs": weights.idfs, "w_avgdls": weights.avgdls,
        "k1": k1, "b": b, "limit": limit, "speaker": speaker or None, "boost": settings.RETRIEVAL_SPEAKER_BOOST,
    }
    for index, value in enumerate(params or []):
        named[f"p{index}"] = value
    out: dict[str, list[Hit]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, named)
        for collection, target_id, score in cursor.fetchall():
            out.setdefault(collection, []).append(Hit(collection, target_id, float(score)))
    for hits in out.values():
        hits.sort(key=lambda hit: -hit.score)  # stable: equal scores keep the query's order
    return out
