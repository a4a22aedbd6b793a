"""BM25's top `limit` per collection, exact in the first `exact` places (10), in two reads.

The exhaustive ranking (`bm25_exact`) scores every document holding any of the question's
lexemes; in a large scope the postings of its frequent lexemes (a speaker's name in a third of the
windows) are most of that work, and a document holding only frequent lexemes rarely makes the
first ten. MaxScore (Turtle & Flood 1995) makes skipping them exact: a lexeme adds at most
`w = idf·(k1 + 1)` to a score (times 1 + RETRIEVAL_SPEAKER_BOOST with a speaker), so when the
bounds of some lexemes add up to less than the `exact`-th score θ, a document holding only those
cannot enter the first `exact`: they score the documents the others select, and select none.

`bm25_top` in a large scope (some lexeme above the common-terms share, retrieval/fulltext.py) when
the question's lexemes have EXHAUSTIVE_BELOW postings or more (fewer: the exhaustive ranking):
1. θ per collection from few postings: each lexeme's FIRST_TAKE best postings by IMPACT_KEY (all
   of them for a lexeme with at most FIRST_FULL), read from the index `retr_posting_impact_idx`
   (scope, collection, lexeme, IMPACT_KEY; migration 0010) best first, their documents scored
   exactly from their tsvectors and filtered. θ is a real document's score, so at most the true
   `exact`-th (0 when fewer were found: every lexeme selects).
2. Per collection, MaxScore's split with that θ, then one read: the documents holding a selecting
   lexeme, scored exactly from all the lexemes' postings (or, when they are few against the
   lists to read, from their tsvectors: PROBE_COST), filtered, best first.
Every document scoring θ or more holds a selecting lexeme, so the first `exact` are the
exhaustive ranking's, with its scores and its order (terms added in the index's order, ties by
document id). Below them the list is the selected documents', at most RETRIEVAL_BM25_POOL_MAX
long: an approximation, as the common-terms rule's was.

Small scopes (no lexeme above the common-terms share) and narrow time windows (`posting_filter`)
keep `bm25_maxscore`: the common-terms rule, then MaxScore's check with the θ that pass found and
a second pass when it fails. See docs/ARCHITECTURE.md, "A million turns in one scope", for what
was measured and what was tried (an impact-ordered threshold read, cutoffs per lexeme, was slower).
"""

from django.conf import settings
from django.db import connection

from memories.models import Scope
from retrieval.fulltext import Hit, _Weights, bm25_candidates, bm25_weights, scored_top

EXACT_TOP = 10


def bm25_maxscore(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "", posting_filter: tuple[str, dict] = ("", {}), passes: list | None = None, exact: int = EXACT_TOP,
    weights: _Weights | None = None,
) -> dict[str, list[Hit]]:
    """`bm25_candidates`' lists, their first `exact` (at most `limit`) the same as `bm25_exact`'s:
    the common-terms rule, and the lexemes with the largest bounds selecting too until MaxScore's
    bound `idf·(k1 + 1)` (times the speaker boost) of the others is below the `exact`-th score
    found. `passes`, when given, gets the selecting lexemes of each pass made (benchmark, tests)."""
    if not lexemes or not collections:
        return {}
    weights = weights or bm25_weights(scope, lexemes, collections)
    if weights is None:
        return {}
    boost = 1 + settings.RETRIEVAL_SPEAKER_BOOST if speaker else 1.0
    count, exact = len(weights.lexemes), min(exact, limit)

    def bound(ci: int, lexeme: str) -> float:
        return weights.idfs[ci * count + weights.lexemes.index(lexeme)] * boost

    selecting = list(weights.selecting)
    while True:
        hits = bm25_candidates(
            scope=scope, lexemes=lexemes, collections=collections, limit=limit, doc_filter=doc_filter, params=params,
            speaker=speaker, posting_filter=posting_filter, weights=weights, selecting=selecting,
        )
        if passes is not None:
            passes.append(list(selecting))
        left = [lexeme for lexeme in weights.lexemes if lexeme not in selecting]
        if not left:
            return hits  # every lexeme selected: the exhaustive ranking itself
        more: set[str] = set()
        for ci, collection in enumerate(weights.collections):
            found = hits.get(collection, [])
            threshold = found[exact - 1].score if len(found) >= exact else 0.0  # fewer: any document could enter
            # The lexemes with the largest bounds select too, until the others' bound is below the threshold.
            rest = sorted(left, key=lambda lexeme: bound(ci, lexeme))
            while rest and sum(bound(ci, lexeme) for lexeme in rest) >= threshold:
                more.add(rest.pop())
        if not more:
            return hits
        selecting += [lexeme for lexeme in left if lexeme in more]


# The index's key (migration 0010 holds the same text without the `p.`): the denominator of BM25's
# term saturation over tf, `(k1·(1 − b) + k1·b·length/REF) / tf` with k1, b at their defaults and
# REF a typical length per collection, so a lexeme's postings in key order are its postings by
# score contribution, best first (exactly so when avgdl = REF; near it otherwise). A query uses
# the index this way only when it repeats the expression.
IMPACT_KEY = (
    "((0.3::float8 + 0.9::float8 * p.length::float8 / (CASE p.collection WHEN 'turn_w1' THEN 30.0::float8"
    " WHEN 'turn_w2' THEN 45.0::float8 ELSE 12.0::float8 END)) / NULLIF(p.tf, 0)::float8)"
)
FIRST_TAKE = 20  # phase 1: a lexeme's best postings per collection
FIRST_FULL = 200  # ... or all of them, when it has no more
PROBE_COST = 15  # phase 2: scoring a document from its tsvector against reading one posting
EXHAUSTIVE_BELOW = 20_000  # postings: fewer, and one exhaustive read is cheaper than two phases
SLACK = 1e-9  # floating-point room: the bound a little high


def bm25_top(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "", posting_filter: tuple[str, dict] = ("", {}), passes: list | None = None, exact: int = EXACT_TOP,
) -> dict[str, list[Hit]]:
    """The top `limit` documents per collection by BM25, the first `exact` (at most `limit`) the
    same as `bm25_exact`'s, with the same scores. Arguments as `fulltext.bm25_candidates`'.
    `passes`, when given, gets what each phase (or MaxScore pass) read (benchmark, tests)."""
    if not lexemes or not collections:
        return {}
    weights = bm25_weights(scope, lexemes, collections)
    if weights is None:
        return {}
    if posting_filter[0] or set(weights.selecting) == set(weights.lexemes):
        return bm25_maxscore(
            scope=scope, lexemes=lexemes, collections=collections, limit=limit, doc_filter=doc_filter, params=params,
            speaker=speaker, posting_filter=posting_filter, passes=passes, exact=exact, weights=weights,
        )
    if sum(weights.dfs) < EXHAUSTIVE_BELOW:
        # Few postings to read: the exhaustive ranking costs less than the first phase saves.
        if passes is not None:
            passes.append(list(weights.lexemes))
        return bm25_candidates(
            scope=scope, lexemes=lexemes, collections=collections, limit=limit, doc_filter=doc_filter, params=params,
            speaker=speaker, weights=weights, selecting=list(weights.lexemes),
        )
    limit = min(limit, settings.RETRIEVAL_BM25_POOL_MAX)
    exact = min(exact, limit)
    count, ncol = len(weights.lexemes), len(weights.collections)
    cells = [(ci, li) for ci in range(ncol) for li in range(count) if weights.dfs[ci * count + li] > 0]
    # Phase 1: each lexeme's best postings; their documents scored exactly and filtered; θ per collection.
    first = _first_read(
        scope=scope, weights=weights, exact=exact, doc_filter=doc_filter, params=params, speaker=speaker,
        reads=[(ci, li, FIRST_TAKE if weights.dfs[ci * count + li] > FIRST_FULL else None) for ci, li in cells],
    )
    thetas = []
    for collection in weights.collections:
        found = first.get(collection, [])
        thetas.append(found[exact - 1] if len(found) >= exact else 0.0)  # fewer: any document could enter
    # Phase 2, per collection: MaxScore's split with that θ. The lexemes with the smallest bounds
    # (`w_l`, times the speaker boost), as many as stay together below θ, cannot place a document
    # among the first `exact` on their own: they score, but only the others select.
    boost = 1 + settings.RETRIEVAL_SPEAKER_BOOST if speaker else 1.0
    essential, scanned, selected = [], 0, 0
    for ci in range(ncol):
        mine = sorted((li for c, li in cells if c == ci), key=lambda li: weights.idfs[ci * count + li])
        bound = 0.0
        while mine and (bound + weights.idfs[ci * count + mine[0]]) * boost * (1 + SLACK) < thetas[ci]:
            bound += weights.idfs[ci * count + mine.pop(0)]
        essential += [(ci, li) for li in mine]
        scanned += sum(weights.dfs[ci * count + li] for c, li in cells if c == ci)
        selected += sum(weights.dfs[ci * count + li] for li in mine)
    # The selected documents are scored from all their postings (reading the non-selecting
    # lexemes' lists whole, each posting kept if its document was selected) or, when they are few
    # against those lists, from their own tsvectors (a visit each).
    probe = selected * PROBE_COST < scanned - selected
    second = _maxscore_read(
        scope=scope, weights=weights, cells=cells, essential=essential, limit=limit, doc_filter=doc_filter, params=params,
        speaker=speaker, probe=probe,
    )
    if passes is not None:
        passes.append({"phase": 1, "thetas": thetas})
        passes.append({"phase": 2, "selecting": [weights.lexemes[li] for ci, li in essential], "cells": len(cells), "probe": probe,
                       "postings": selected if probe else scanned + selected})
    # Every document scoring θ or more was selected and scored exactly: the lists are final.
    return {collection: [Hit(collection, target_id, score) for _, target_id, score in rows] for collection, rows in second.items()}


def _maxscore_read(
    *, scope: Scope, weights: _Weights, cells: list[tuple[int, int]], essential: list[tuple[int, int]], limit: int,
    doc_filter: str, params: list | None, speaker: str, probe: bool,
) -> dict[str, list[tuple[int, int, float]]]:
    """The documents holding an `essential` (collection index, lexeme index), scored exactly from
    the postings of every cell, or (`probe`) from their tsvectors; per collection, in score order,
    the first `limit` that pass `doc_filter`: collection → (document, target, score)."""
    count = len(weights.lexemes)
    if probe:
        scored = f"SELECT s.document_id, s.ci, {_tsv_score('s', speaker)} AS score FROM sel s"
    else:
        spoken = "CASE WHEN bool_or(p.speaker = %(speaker)s) THEN 1 + %(boost)s ELSE 1 END" if speaker else "1"
        scored = f"""
            SELECT p.document_id, min(q.ci) AS ci, sum(q.w * p.tf / (p.tf + q.kc + q.kl * p.length) ORDER BY q.lexeme) * {spoken} AS score
            FROM unnest(%(a_ci)s::int[], %(a_collection)s::text[], %(a_lexeme)s::text[], %(a_w)s::float8[], %(a_kc)s::float8[],
                        %(a_kl)s::float8[]) AS q(ci, collection, lexeme, w, kc, kl)
            CROSS JOIN LATERAL (
                SELECT p.document_id, p.tf, p.length, p.speaker FROM retrieval_posting p
                WHERE p.scope_id = %(scope)s AND p.collection = q.collection AND p.lexeme = q.lexeme
            ) p
            WHERE p.document_id IN (SELECT document_id FROM sel)
            GROUP BY p.document_id
        """
    sql = f"""
        WITH sel AS MATERIALIZED (
            SELECT p.document_id, min(q.ci) AS ci
            FROM unnest(%(e_ci)s::int[], %(e_collection)s::text[], %(e_lexeme)s::text[]) AS q(ci, collection, lexeme)
            CROSS JOIN LATERAL (
                SELECT p.document_id FROM retrieval_posting p
                WHERE p.scope_id = %(scope)s AND p.collection = q.collection AND p.lexeme = q.lexeme
            ) p
            GROUP BY p.document_id
        ), scored AS MATERIALIZED ({scored})
        {scored_top(doc_filter)}
    """
    # A document's terms are added in the order of the index (by lexeme), as the exhaustive ranking
    # adds them, so that equal scores stay equal and ties go by document id there and here.
    ordered = sorted(cells, key=lambda cell: (weights.collections[cell[0]], weights.lexemes[cell[1]]))
    named = {
        "scope": scope.pk, "collections": weights.collections, "lexemes": weights.lexemes, "idfs": weights.idfs,
        "lexeme_count": count, "k_const": weights.k_const, "k_length": weights.k_length, "limit": limit,
        "speaker": speaker, "boost": settings.RETRIEVAL_SPEAKER_BOOST,
        "e_ci": [ci + 1 for ci, _ in essential], "e_collection": [weights.collections[ci] for ci, _ in essential],
        "e_lexeme": [weights.lexemes[li] for _, li in essential],
        "a_ci": [ci + 1 for ci, _ in ordered], "a_collection": [weights.collections[ci] for ci, _ in ordered],
        "a_lexeme": [weights.lexemes[li] for _, li in ordered], "a_w": [weights.idfs[ci * count + li] for ci, li in ordered],
        "a_kc": [weights.k_const[ci] for ci, _ in ordered], "a_kl": [weights.k_length[ci] for ci, _ in ordered],
    }
    for index, value in enumerate(params or []):
        named[f"p{index}"] = value
    out: dict[str, list[tuple[int, int, float]]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, named)
        for collection, document_id, target_id, score in cursor.fetchall():
            out.setdefault(collection, []).append((document_id, target_id, float(score)))
    return out


def _first_read(
    *, scope: Scope, weights: _Weights, exact: int, doc_filter: str, params: list | None, speaker: str,
    reads: list[tuple[int, int, int | None]],
) -> dict[str, list[float]]:
    """For each (collection index, lexeme index, how many or None for all) that lexeme's postings in
    the collection best first; their documents scored exactly from their tsvectors (as the
    exhaustive ranking scores them); per collection the best `exact` scores among those that pass
    `doc_filter`, best first."""
    sql = f"""
        WITH found AS MATERIALIZED (
            SELECT h.document_id, min(q.ci) AS ci
            FROM unnest(%(r_ci)s::int[], %(r_li)s::int[], %(r_take)s::int[]) AS q(ci, li, take)
            CROSS JOIN LATERAL (
                SELECT p.document_id FROM retrieval_posting p
                WHERE p.scope_id = %(scope)s AND p.collection = (%(collections)s::text[])[q.ci]
                  AND p.lexeme = (%(lexemes)s::text[])[q.li]
                ORDER BY {IMPACT_KEY} LIMIT q.take
            ) h
            GROUP BY h.document_id
        ), scored AS MATERIALIZED (
            SELECT f.document_id, f.ci, {_tsv_score('f', speaker)} AS score
            FROM found f
        )
        {scored_top(doc_filter, limit="%(exact)s")}
    """
    named = {
        "scope": scope.pk, "collections": weights.collections, "lexemes": weights.lexemes, "idfs": weights.idfs,
        "lexeme_count": len(weights.lexemes), "k_const": weights.k_const, "k_length": weights.k_length, "exact": exact,
        "speaker": speaker, "boost": settings.RETRIEVAL_SPEAKER_BOOST,
        "r_ci": [ci + 1 for ci, _, _ in reads], "r_li": [li + 1 for _, li, _ in reads], "r_take": [take for _, _, take in reads],
    }
    for index, value in enumerate(params or []):
        named[f"p{index}"] = value
    out: dict[str, list[float]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, named)
        for collection, _, _, score in cursor.fetchall():
            out.setdefault(collection, []).append(float(score))
    return out


def bm25_exact(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "", posting_filter: tuple[str, dict] = ("", {}),
) -> dict[str, list[Hit]]:
    """The exhaustive ranking: every document holding any lexeme scored (for comparison)."""
    return bm25_candidates(
        scope=scope, lexemes=lexemes, collections=collections, limit=limit, doc_filter=doc_filter, params=params,
        speaker=speaker, posting_filter=posting_filter, selecting=list(lexemes),
    )


def _tsv_score(row: str, speaker: str) -> str:
    """SQL for the BM25 score of the document `row`.document_id (collection index `row`.ci) read
    from its tsvector: the question's lexemes' tf as positions, their terms added in the order of
    the index (by lexeme), as the exhaustive ranking adds them, times the speaker boost."""
    spoken = "CASE WHEN d.speaker = %(speaker)s THEN 1 + %(boost)s ELSE 1 END" if speaker else "1"
    return f"""(
        SELECT sum((%(idfs)s::float8[])[({row}.ci - 1) * %(lexeme_count)s + array_position(%(lexemes)s::text[], u.lexeme)]
                   * cardinality(u.positions) / (cardinality(u.positions) + (%(k_const)s::float8[])[{row}.ci]
                   + (%(k_length)s::float8[])[{row}.ci] * d.length) ORDER BY u.lexeme) * {spoken}
        FROM retrieval_searchdocument d CROSS JOIN LATERAL unnest(d.tsv) u
        WHERE d.id = {row}.document_id AND u.lexeme = ANY(%(lexemes)s::text[])
        GROUP BY d.speaker
    )"""
