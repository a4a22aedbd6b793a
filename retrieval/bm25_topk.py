"""BM25's top `limit` per collection, exact, without every common word selecting documents.

The exhaustive ranking scores every document that holds any of the question's lexemes. In a
large collection a common lexeme's postings are most of that work, and a document that holds
only common lexemes rarely makes the list. `bm25_candidates` lets common lexemes score without
selecting (a document must hold a selecting lexeme to be scored); on its own that rule could drop
a document the exhaustive ranking keeps. Here it is made safe with MaxScore's bound (Turtle &
Flood 1995): a lexeme adds at most its `idf·(k1 + 1)` to a score (the term's saturation as tf
grows; times 1 + RETRIEVAL_SPEAKER_BOOST with a speaker), so a document that holds none of the
selecting lexemes scores at most the sum of the others' bounds. When that sum is below the
`exact`-th score found (among documents that pass the filters), no such document can enter the
first `exact` places, and those are the exhaustive ranking's (ties at the last score aside).
When it is not, the non-selecting lexemes with the largest bounds select too, until the bound
holds (with the threshold already found, which a second pass can only raise), at worst all of
them: one or two passes, exact either way.

`exact` is EXACT_TOP (10, what recall returns by default), not the whole pool (up to 500): the
500th score of a large scope is low, below the common words' bound for most questions, and
guaranteeing the whole pool then costs a second, exhaustive pass (measured on a 26,000-turn
Zipf scope: 2 passes for 24 questions of 30, p50 192 ms against 149 for the exhaustive ranking
alone). Below the first `exact` places the pool is the common-terms rule's, as before.
"""

from django.conf import settings

from memories.models import Scope
from retrieval.fulltext import Hit, bm25_candidates, bm25_weights

EXACT_TOP = 10


def bm25_top(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "", posting_filter: tuple[str, dict] = ("", {}), passes: list | None = None, exact: int = EXACT_TOP,
) -> dict[str, list[Hit]]:
    """`bm25_candidates`' lists, their first `exact` (at most `limit`) the same as `bm25_exact`'s.
    `passes`, when given, gets the selecting lexemes of each pass made (benchmark, tests)."""
    if not lexemes or not collections:
        return {}
    weights = bm25_weights(scope, lexemes, collections)
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


def bm25_exact(
    *, scope: Scope, lexemes: list[str], collections: list[str], limit: int, doc_filter: str = "", params: list | None = None,
    speaker: str = "", posting_filter: tuple[str, dict] = ("", {}),
) -> dict[str, list[Hit]]:
    """The exhaustive ranking: every document holding any lexeme scored (for comparison)."""
    return bm25_candidates(
        scope=scope, lexemes=lexemes, collections=collections, limit=limit, doc_filter=doc_filter, params=params,
        speaker=speaker, posting_filter=posting_filter, selecting=list(lexemes),
    )
