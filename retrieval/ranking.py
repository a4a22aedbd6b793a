"""Fusion of candidate lists and the three ranking lanes.

Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): each list votes 1/(k + rank)
for its items; k = RETRIEVAL_RRF_K, 10 by default (the paper uses 60; see docs/ARCHITECTURE.md).
Or, with RETRIEVAL_FUSION=zscore, the lists' own scores standardised and summed (`zscore`),
which needs no constant; chosen between them by cross-validation (retrieval/cv.py). The fused score becomes the
similarity lane, scaled so the best candidate has 1.0, and the final score is
`w_sim·similarity + w_imp·importance + w_rec·recency` with the scope's weights. Recency halves
every RETRIEVAL_HALF_LIFE_DAYS (365) days; an item with importance ≥ RETRIEVAL_IMPORTANCE_FLOOR
(0.75) does not decay, because what matters does not stop mattering with age.
"""

import math
from collections.abc import Hashable, Sequence
from datetime import datetime

import numpy as np
from django.conf import settings

DEFAULT_IMPORTANCE = 0.5  # rows nobody scored (raw turns without an LLM) are neutral


def best_first(scores: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    """The places of the first `n` by score, best first, ties by id: a full sort's first `n`, found by partitioning the
    scores at the n-th (faster than an argpartition) and sorting only what is at or above it, every row tied at the
    n-th included so that the cut among them is by id."""
    if n < len(scores):
        keep = np.flatnonzero(scores >= np.partition(scores, len(scores) - n)[len(scores) - n])
    else:
        keep = np.arange(len(scores))
    return keep[np.lexsort((ids[keep], -scores[keep]))][:n]


def rrf(lists: Sequence[Sequence[Hashable]], *, k: float | None = None, weights: Sequence[float] | None = None) -> dict[Hashable, float]:
    """Fused scores: sum over lists of weight / (k + rank), ranks from 1. An item listed twice
    in one list counts once, at its best rank."""
    k = settings.RETRIEVAL_RRF_K if k is None else k
    scores: dict[Hashable, float] = {}
    for index, items in enumerate(lists):
        weight = 1.0 if weights is None else weights[index]
        seen = set()
        for rank, item in enumerate(items, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return scores


def zscore(lists: Sequence[Sequence[Hashable]], values: Sequence[Sequence[float] | None]) -> dict[Hashable, float]:
    """Fused scores from the lists' own scores: each list's scores are divided by their standard
    deviation and shifted so its last item scores 0, and an item gets the sum over the lists
    that hold it (a list that does not hold it gives 0, as to its worst). So a list whose scores
    spread widely (a BM25 list with one document far ahead) speaks louder than a flat one, which
    ranks alone cannot say. A list without scores (`None`) scores by rank: n − rank over n.
    An item listed twice in one list counts once, at its first (best) place."""
    scores: dict[Hashable, float] = {}
    for items, raw in zip(lists, values):
        seen: dict[Hashable, float] = {}
        for rank, item in enumerate(items):
            if item not in seen:
                seen[item] = float(raw[rank]) if raw is not None else (len(items) - rank) / len(items)
        if not seen:
            continue
        numbers = list(seen.values())
        mean = sum(numbers) / len(numbers)
        spread = math.sqrt(sum((v - mean) ** 2 for v in numbers) / len(numbers)) or 1.0
        low = min(numbers)
        for item, value in seen.items():
            scores[item] = scores.get(item, 0.0) + (value - low) / spread
    return scores


def fuse(lists: Sequence[Sequence[Hashable]], values: Sequence[Sequence[float] | None]) -> dict[Hashable, float]:
    """The fused scores by RETRIEVAL_FUSION: "rrf" (ranks only) or "zscore" (the lists' scores)."""
    if settings.RETRIEVAL_FUSION == "zscore":
        return zscore(lists, values)
    return rrf(lists)


def recency(moment: datetime | None, *, now: datetime, importance: float | None = None, half_life_days: float | None = None) -> float:
    """1.0 now, 0.5 after one half-life; 1.0 whatever the age when importance reaches the floor."""
    if importance is not None and importance >= settings.RETRIEVAL_IMPORTANCE_FLOOR:
        return 1.0
    if moment is None:
        return 0.0
    half_life = settings.RETRIEVAL_HALF_LIFE_DAYS if half_life_days is None else half_life_days
    age_days = max((now - moment).total_seconds() / 86400.0, 0.0)
    return 0.5 ** (age_days / half_life)


def lane_score(*, similarity: float, importance: float | None, recency_value: float, weights: dict[str, float]) -> float:
    importance = DEFAULT_IMPORTANCE if importance is None else importance
    return (
        weights.get("similarity", 0.0) * similarity
        + weights.get("importance", 0.0) * importance
        + weights.get("recency", 0.0) * recency_value
    )


def pool_size(scope_size: int) -> int:
    """Candidates per list: a fraction of the scope, clamped (RETRIEVAL_POOL_MIN/MAX/FRACTION)."""
    size = round(scope_size * settings.RETRIEVAL_POOL_FRACTION)
    return max(settings.RETRIEVAL_POOL_MIN, min(settings.RETRIEVAL_POOL_MAX, size))
