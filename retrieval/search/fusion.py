"""Fusion and the lanes: the candidate lists become one ranking (reciprocal rank fusion, or the
lists' standardised scores: RETRIEVAL_FUSION), and the
hydrated head of it is scored on the three lanes (retrieval/ranking.py).

Documents map to items before they vote, so every list votes for the same thing: a window
stands for its centre turn, and in `recall` a turn stands for its episode.
"""

from dataclasses import dataclass

from memories.models import Episode
from retrieval.documents import TURN_COLLECTIONS
from retrieval.models import Collection
from retrieval.ranking import DEFAULT_IMPORTANCE, fuse, lane_score, recency
from retrieval.search.candidates import Candidates
from retrieval.search.question import Question
from retrieval.search.results import KINDS, RecallItem

Key = tuple[str, int]  # (kind, primary key)
_WHY_DEPTH = 50  # an item says which lists ranked it, down to this rank


@dataclass
class Fused:
    scores: dict[Key, float]
    ranked: list[Key]  # best first
    why: dict[Key, list[str]]


def candidates_fuse(c: Candidates, *, q: Question, pool: int, evidence: bool) -> Fused:
    """The lists fused, best first, at most `pool` items."""
    turn_ids = {h.target_id for name in TURN_COLLECTIONS for h in c.bm25.get(name, []) + c.vectors.get(name, []) + c.unindexed.get(name, [])}
    episode_of_turn = {} if evidence or not turn_ids else dict(
        Episode.objects.in_scope(q.scope).filter(turn_id__in=turn_ids).values_list("turn_id", "pk")
    )

    def key(collection: str, target_id: int) -> Key:
        if collection == Collection.FACT:
            return ("fact", target_id)
        if collection == Collection.EPISODE:
            return ("episode", target_id)
        if target_id in episode_of_turn:
            return ("episode", episode_of_turn[target_id])
        return ("turn", target_id)

    lists: list[list[Key]] = []
    values: list[list[float] | None] = []
    why: dict[Key, list[str]] = {}

    def add_list(name: str, keys: list[Key], notes: list[str] | None = None, scores: list[float] | None = None) -> None:
        best = {}
        for at, item in enumerate(keys):
            best.setdefault(item, at)  # a list is best first: an item keeps its first place
        ranked = list(best)
        lists.append(ranked)
        values.append([scores[best[item]] for item in ranked] if scores is not None else None)
        for rank, item in enumerate(ranked[:_WHY_DEPTH], start=1):
            why.setdefault(item, []).append(f"{name} #{rank}" + (f" ({notes[rank - 1]})" if notes else ""))

    for collection, hits in sorted(c.bm25.items()):
        add_list(f"bm25 {collection}", [key(collection, h.target_id) for h in hits], [f"{h.score:.2f}" for h in hits],
                 [h.score for h in hits])
    for collection, hits in sorted(c.vectors.items()):
        add_list(f"vector {collection}", [key(collection, h.target_id) for h in hits], [f"cos {h.similarity:.2f}" for h in hits],
                 [h.similarity for h in hits])
    for collection, hits in sorted(c.unindexed.items()):
        add_list(f"not indexed yet {collection}", [key(collection, h.target_id) for h in hits], [f"{h.score:.0f} words" for h in hits],
                 [h.score for h in hits])
    if c.entities:
        add_list("entity facts", [("fact", f.pk) for f in c.entity_facts], [f.subject.name for f in c.entity_facts])
    if q.changes and "fact" in q.kinds:
        add_list("changed in window", [("fact", f.pk) for f in c.changed])

    scores = fuse(lists, values)
    return Fused(scores=scores, ranked=sorted(scores, key=lambda item: -scores[item])[:pool], why=why)


def lanes_score(items: dict[Key, RecallItem], fused: Fused, *, q: Question) -> list[RecallItem]:
    """The hydrated items scored on the lanes with the scope's weights, best first; each says why."""
    best = max((fused.scores[key] for key in items), default=1.0) or 1.0
    weights = q.scope.weights
    out: list[RecallItem] = []
    for key, item in items.items():
        importance = item.lanes.pop("_importance", None)
        moment = item.occurred_at if item.kind != "fact" else (item.valid_from or item.occurred_at)
        item.lanes = {
            "similarity": fused.scores[key] / best,
            "importance": DEFAULT_IMPORTANCE if importance is None else importance,
            "recency": recency(moment, now=q.now, importance=importance),
        }
        item.score = lane_score(
            similarity=item.lanes["similarity"], importance=importance, recency_value=item.lanes["recency"], weights=weights,
        )
        item.why = fused.why.get(key, []) + item.why
        out.append(item)
    out.sort(key=lambda i: (-i.score, KINDS.index(i.kind), -fused.scores[(i.kind, i.pk)]))
    return out
