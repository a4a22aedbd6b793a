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


def _matching(scope: Scope, lexemes: list[str], collections: list[str]) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.lexeme, max(t.df::float8 / c.doc_count) FROM retrieval_termstat t"
            " JOIN retrieval_corpusstat c ON c.scope_id = t.scope_id AND c.collection = t.collection"
            " WHERE t.scope_id = %s AND t.collection = ANY(%s) AND t.lexeme = ANY(%s) AND c.doc_count >= %s GROUP BY t.lexeme",
            [scope.pk, list(collections), lexemes, COMMON_TERM_MIN_DOCS],
        )
        common = {lexeme for lexeme, share in cursor.fetchall() if share > COMMON_TERM_SHARE}
    rare = [lexeme for lexeme in lexemes if lexeme not in common]
    return rare or lexemes


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
    selecting = _matching(scope, lexemes, collections)
    # Documents are chosen by the selecting (rarer) lexemes and scored with all of them.
    only_selected = "" if set(selecting) == set(lexemes) else (
        " AND p.document_id IN (SELECT s.document_id FROM retrieval_posting s WHERE s.scope_id = %(scope)s"
        " AND s.collection = ANY(%(collections)s) AND s.lexeme = ANY(%(selecting)s))"
    )
    sql = f"""
        WITH corpus AS (
            SELECT collection, doc_count, total_length::float8 / greatest(doc_count, 1) AS avgdl
            FROM retrieval_corpusstat WHERE scope_id = %(scope)s AND collection = ANY(%(collections)s) AND doc_count > 0
        ), terms AS (
            SELECT t.collection, t.lexeme, ln(1 + (c.doc_count - t.df + 0.5) / (t.df + 0.5)) AS idf
            FROM retrieval_termstat t JOIN corpus c ON c.collection = t.collection
            WHERE t.scope_id = %(scope)s AND t.collection = ANY(%(collections)s) AND t.lexeme = ANY(%(lexemes)s) AND t.df > 0
        ), scored AS (
            SELECT p.document_id,
                   sum(terms.idf * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / corpus.avgdl))) AS bm25
            FROM retrieval_posting p
            JOIN terms ON terms.collection = p.collection AND terms.lexeme = p.lexeme
            JOIN corpus ON corpus.collection = p.collection
            WHERE p.scope_id = %(scope)s AND p.collection = ANY(%(collections)s) AND p.lexeme = ANY(%(lexemes)s)
            {only_selected}
            GROUP BY p.document_id
        ), boosted AS (
            SELECT d.collection, d.target_id,
                   s.bm25 * CASE WHEN d.speaker = %(speaker)s THEN 1 + %(boost)s ELSE 1 END AS score
            FROM scored s JOIN retrieval_searchdocument d ON d.id = s.document_id
            WHERE TRUE {doc_filter}
        )
        SELECT collection, target_id, score FROM (
            SELECT collection, target_id, score,
                   row_number() OVER (PARTITION BY collection ORDER BY score DESC, target_id) AS rank
            FROM boosted
        ) ranked WHERE rank <= %(limit)s ORDER BY collection, rank
    """
    named = {
        "scope": scope.pk, "collections": list(collections), "lexemes": lexemes, "selecting": selecting,
        "k1": k1, "b": b, "limit": limit, "speaker": speaker or None, "boost": settings.RETRIEVAL_SPEAKER_BOOST,
    }
    for index, value in enumerate(params or []):
        named[f"p{index}"] = value
    out: dict[str, list[Hit]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, named)
        for collection, target_id, score in cursor.fetchall():
            out.setdefault(collection, []).append(Hit(collection, target_id, float(score)))
    return out
