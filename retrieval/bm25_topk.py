"""BM25's top `limit` per collection, exact in the first `exact` places (10) or throughout.

`bm25_top` picks the read:
- a collection of PACK_AT documents or more, whose frequent lexemes are packed by the indexer
  (retrieval/packs.py): the exhaustive ranking, every document holding any lexeme scored from
  the packs and the rows after them in numpy; its list is at most RETRIEVAL_BM25_POOL_MAX long
  (each place costs a document visit);
- few postings (below EXHAUSTIVE_BELOW): the exhaustive ranking in one SQL read;
- otherwise (a smaller scope, a narrow time window's `posting_filter`): `bm25_maxscore`, exact in
  the first `exact`.

`bm25_maxscore` is MaxScore (Turtle & Flood 1995) over the common-terms rule: the exhaustive
ranking (`bm25_exact`) scores every document holding any of the question's lexemes; a lexeme
adds at most `w = idf·(k1 + 1)` to a score (times 1 + RETRIEVAL_SPEAKER_BOOST with a speaker), so
when the bounds of some lexemes add up to less than the `exact`-th score θ, a document holding
only those cannot enter the first `exact`: they score the documents the others select, and select
none; when the check fails, the lexemes with the largest bounds select too and it reads again.

See docs/ARCHITECTURE.md, "A million turns in one scope", for what was measured and tried (an
impact-ordered threshold read; a two-phase MaxScore read with θ from each lexeme's best postings,
which packs replaced).
"""

from django.conf import settings
from django.db import connection

from memories.models import Scope
from retrieval.fulltext import Hit, _Weights, bm25_candidates, bm25_weights
from retrieval import packs
from retrieval.packs import bm25_packed

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


EXHAUSTIVE_BELOW = 20_000  # postings: fewer, and one exhaustive read is cheap


def bm25_top(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "", posting_filter: tuple[str, dict] = ("", {}), passes: list | None = None, exact: int = EXACT_TOP,
) -> dict[str, list[Hit]]:
    """The top `limit` documents per collection by BM25, the first `exact` (at most `limit`) the
    same as `bm25_exact`'s, with the same scores (all of them, from packs). Arguments as
    `fulltext.bm25_candidates`'. `passes`, when given, gets what each read took (benchmark, tests)."""
    if not lexemes or not collections:
        return {}
    weights = bm25_weights(scope, lexemes, collections)
    if weights is None:
        return {}
    if not posting_filter[0] and max(weights.doc_counts) >= packs.PACK_AT:
        # A large collection, whose frequent lexemes are packed (retrieval/packs.py): the exhaustive
        # ranking, read as arrays (a lexeme without a pack, as rows).
        return bm25_packed(scope=scope, weights=weights, limit=min(limit, settings.RETRIEVAL_BM25_POOL_MAX), doc_filter=doc_filter, params=params, speaker=speaker,
                           passes=passes)
    if not posting_filter[0] and sum(weights.dfs) < EXHAUSTIVE_BELOW:
        # Few postings to read: the exhaustive ranking in one read.
        if passes is not None:
            passes.append(list(weights.lexemes))
        return bm25_candidates(
            scope=scope, lexemes=lexemes, collections=collections, limit=limit, doc_filter=doc_filter, params=params,
            speaker=speaker, weights=weights, selecting=list(weights.lexemes),
        )
    return bm25_maxscore(
        scope=scope, lexemes=lexemes, collections=collections, limit=limit, doc_filter=doc_filter, params=params,
        speaker=speaker, posting_filter=posting_filter, passes=passes, exact=exact, weights=weights,
    )


def bm25_exact(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "", posting_filter: tuple[str, dict] = ("", {}),
) -> dict[str, list[Hit]]:
    """The exhaustive ranking: every document holding any lexeme scored (for comparison)."""
    return bm25_candidates(
        scope=scope, lexemes=lexemes, collections=collections, limit=limit, doc_filter=doc_filter, params=params,
        speaker=speaker, posting_filter=posting_filter, selecting=list(lexemes),
    )
