"""The learned re-ranking of an evidence search's head (RETRIEVAL_RERANK).

Reciprocal rank fusion counts every list alike and knows nothing of a turn's neighbours; the
head's rules (replies after questions, the time preference) each add one signal by hand. Here
the first DEPTH turns of the ranking the pipeline made are put in a new order by a logistic
model over what the lists said of each (its place and score in each of the seven turn lists, its
fused vote, its neighbours' votes, whether it asks a question, whether its speaker is named) and
its place in that ranking. The weights (retrieval/rerank.json) are fitted on LOCOMO conversations
by `memoryweb eval rerank`, which also measures them leaving one conversation out at a time
(docs/ARCHITECTURE.md, "A learned order for the head").

Only in a scope searched exactly, as the model's lists were (a large scope's lists are deeper and
come from graphs); facts and episodes in the head keep their places, the turns are reordered
among the places turns held.
"""

import json
import math
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from retrieval.models import Collection

DEPTH = 30  # the turns of the head reordered: as deep as the model's training saw
LISTS = (
    f"bm25 {Collection.TURN}", f"bm25 {Collection.TURN_W1}", f"bm25 {Collection.TURN_W2}",
    f"vector {Collection.TURN}", f"vector {Collection.TURN_W1}", f"vector {Collection.TURN_W2}", "speaker",
)
RRF_K = 10  # the vote a list gives its item at rank r (from 1): 1 / (RRF_K + r), whatever RETRIEVAL_RRF_K is
FEATURES = (
    *(f"vote {name}" for name in LISTS), *(f"score {name}" for name in LISTS),
    "vote", "vote of the turn before", "vote of the turn after", "speaker named", "asks", "lists holding it",
    "length", "place", "in the first ten",
)
WEIGHTS = Path(__file__).with_name("rerank.json")


@dataclass(frozen=True)
class Model:
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # one per feature, then the bias

    def scores(self, x: np.ndarray) -> np.ndarray:
        return np.hstack([(x - self.mean) / self.scale, np.ones((len(x), 1))]) @ self.weights

    def as_dict(self) -> dict:
        return {"features": list(FEATURES), "mean": self.mean.round(8).tolist(), "scale": self.scale.round(8).tolist(),
                "weights": self.weights.round(8).tolist()}


@lru_cache(maxsize=1)
def shipped_model() -> Model | None:
    """The fitted model shipped with the code, or None when there is none or it was fitted on other features."""
    if not WEIGHTS.exists():
        return None
    data = json.loads(WEIGHTS.read_text())
    if tuple(data.get("features", ())) != FEATURES:
        return None
    return Model(np.asarray(data["mean"]), np.asarray(data["scale"]), np.asarray(data["weights"]))


def model_fit(x: np.ndarray, y: np.ndarray, *, l2: float, iterations: int = 30) -> Model:
    """Logistic regression on standardised features, L2-penalised (not the bias), by Newton's method."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = l2 * np.r_[np.ones(z.shape[1] - 1), 0.0]
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        gradient = z.T @ (p - y) + penalty * w
        hessian = (z * (p * (1.0 - p))[:, None]).T @ z + np.diag(penalty)
        w -= np.linalg.solve(hessian, gradient)
    return Model(mean, scale, w)


# While `traced()` runs, each re-ranking records its head's features and turns here and keeps the
# pipeline's order (what `memoryweb eval rerank` fits and measures on).
_trace: ContextVar[list | None] = ContextVar("rerank_trace", default=None)


@contextmanager
def traced():
    """Record instead of reorder: yields the list each head is appended to, as (turn pks, features)."""
    records: list = []
    token = _trace.set(records)
    try:
        yield records
    finally:
        _trace.reset(token)


def lists_of(found) -> dict[str, dict[int, tuple[int, float]]]:
    """Each turn list's (rank from 0, score) by turn (LISTS), the speakers' lists as one (a turn's best)."""
    lists: dict[str, dict[int, tuple[int, float]]] = {}
    for kind, by_collection, value in (("bm25", found.bm25, "score"), ("vector", found.vectors, "similarity")):
        for collection, hits in by_collection.items():
            ranked = lists.setdefault(f"{kind} {collection}", {})
            for rank, hit in enumerate(hits):
                ranked.setdefault(hit.target_id, (rank, getattr(hit, value)))
    spoken: dict[int, tuple[int, float]] = {}
    for hits in found.speakers.values():
        for rank, hit in enumerate(hits):
            if hit.target_id not in spoken or spoken[hit.target_id][0] > rank:
                spoken[hit.target_id] = (rank, hit.similarity)
    lists["speaker"] = spoken
    return {name: lists.get(name, {}) for name in LISTS}


def features(*, question: str, turns: list, lists: dict[str, dict[int, tuple[int, float]]]) -> np.ndarray:
    """One row of FEATURES per turn item of the head (`turns`, in the pipeline's order; each knows
    the turns before and after it in its session, `previous_turn` and `next_turn`)."""
    tops = {name: max((score for _, score in found.values()), default=0.0) for name, found in lists.items()}
    votes: dict[int, float] = {}
    for found in lists.values():
        for pk, (rank, _) in found.items():
            votes[pk] = votes.get(pk, 0.0) + 1.0 / (RRF_K + rank + 1)

    asked = question.lower()
    rows = []
    for place, item in enumerate(turns):
        row = [1.0 / (RRF_K + lists[name][item.pk][0] + 1) if item.pk in lists.get(name, {}) else 0.0 for name in LISTS]
        row += [lists[name][item.pk][1] / tops[name] if item.pk in lists.get(name, {}) and tops[name] else 0.0 for name in LISTS]
        after = item.next_turn[0] if item.next_turn else None
        row += [
            votes.get(item.pk, 0.0), votes.get(item.previous_turn, 0.0), votes.get(after, 0.0),
            1.0 if item.speaker and item.speaker.lower() in asked else 0.0,
            1.0 if item.text.strip().endswith("?") else 0.0,
            sum(1 for name in LISTS if item.pk in lists.get(name, {})) / len(LISTS),
            math.log1p(len(item.text)) / 6,
            1.0 / (RRF_K + place + 1), 1.0 if place < 10 else 0.0,
        ]
        rows.append(row)
    return np.asarray(rows, dtype=float).reshape(len(rows), len(FEATURES))


def head_reranked(items: list, found, *, question: str, model: Model | None) -> list:
    """`items` (the pipeline's ranking, best first) with the turns among its first DEPTH put in the
    model's order, each in a place a turn held; the rest as it was. Under `traced()`: unchanged."""
    head = items[:DEPTH]
    places = [at for at, item in enumerate(head) if item.kind == "turn"]
    if len(places) < 2:
        return items
    turns = [head[at] for at in places]
    x = features(question=question, turns=turns, lists=lists_of(found))
    trace = _trace.get()
    if trace is not None:
        trace.append(([t.pk for t in turns], x))
        return items
    if model is None:
        return items
    order = np.argsort(-model.scores(x), kind="stable")
    head = list(head)
    for at, chosen in zip(places, order):
        head[at] = turns[chosen]
        if places[chosen] != at:  # an item says why it is where it is
            turns[chosen].why.append(f"moved from #{places[chosen] + 1} to #{at + 1} by the learned order")
    return head + items[DEPTH:]
