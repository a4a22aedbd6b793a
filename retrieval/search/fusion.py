"""Fusion and the lanes: the candidate lists become one ranking (reciprocal rank fusion, or the
lists' standardised scores: RETRIEVAL_FUSION), and the
hydrated head of it is scored on the three lanes (retrieval/ranking.py).

Documents map to items before they vote, so every list votes for the same thing: a window
stands for its centre turn, and in `recall` a turn stands for its episode.
"""

from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings

from memories.models import Episode
from retrieval.documents import TURN_COLLECTIONS
from retrieval.models import Collection
from retrieval.ranking import DEFAULT_IMPORTANCE, fuse, lane_score, recency
from retrieval.search.candidates import Candidates
from retrieval.search.question import Question, asks_list, asks_when, named_speaker, tells_time
from retrieval.search.results import KINDS, RecallItem

Key = tuple[str, int]  # (kind, primary key)
_WHY_DEPTH = 50  # an item says which lists ranked it, down to this rank
# What was said this long after the end of the period a question names still counts as said in it
# for RETRIEVAL_TIME_PREFERENCE: people tell of a thing days later ("last week I went to …").
TIME_PREFERENCE_GRACE = timedelta(days=7)


@dataclass
class Fused:
    scores: dict[Key, float]
    ranked: list[Key]  # best first
    why: dict[Key, list[str]]


def candidates_fuse(c: Candidates, *, q: Question, pool: int, evidence: bool) -> Fused:
    """The lists fused, best first, at most `pool` items."""
    episode_of_turn: dict[int, int] = {}
    if not evidence:
        turn_ids = {h.target_id for name in TURN_COLLECTIONS for h in c.bm25.get(name, []) + c.vectors.get(name, []) + c.unindexed.get(name, [])}
        turn_ids |= {h.target_id for hits in c.speakers.values() for h in hits} | {h.target_id for h in c.feedback}
        if turn_ids:
            episode_of_turn = dict(Episode.objects.in_scope(q.scope).filter(turn_id__in=turn_ids).values_list("turn_id", "pk"))

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

    # Only "zscore" reads the lists' own scores; "rrf" needs their order alone.
    scored = settings.RETRIEVAL_FUSION == "zscore"

    def add_list(name: str, keys: list[Key], notes: list[str] | None = None, scores: list[float] | None = None) -> None:
        """`notes`: what each of the first _WHY_DEPTH items says of its place (no more are read)."""
        best = {}
        for at, item in enumerate(keys):
            best.setdefault(item, at)  # a list is best first: an item keeps its first place
        ranked = list(best)
        lists.append(ranked)
        values.append([scores[best[item]] for item in ranked] if scores is not None and scored else None)
        for rank, item in enumerate(ranked[:_WHY_DEPTH], start=1):
            why.setdefault(item, []).append(f"{name} #{rank}" + (f" ({notes[rank - 1]})" if notes else ""))

    for collection, hits in sorted(c.bm25.items()):
        add_list(f"bm25 {collection}", [key(collection, h.target_id) for h in hits], [f"{h.score:.2f}" for h in hits[:_WHY_DEPTH]],
                 [h.score for h in hits])
    for collection, hits in sorted(c.vectors.items()):
        add_list(f"vector {collection}", [key(collection, h.target_id) for h in hits], [f"cos {h.similarity:.2f}" for h in hits[:_WHY_DEPTH]],
                 [h.similarity for h in hits])
    for speaker, hits in c.speakers.items():
        add_list(f"vector turn said by {speaker}", [key(h.collection, h.target_id) for h in hits],
                 [f"cos {h.similarity:.2f}" for h in hits[:_WHY_DEPTH]], [h.similarity for h in hits])
    if c.feedback:
        add_list("bm25 turn with feedback words", [key(h.collection, h.target_id) for h in c.feedback],
                 [f"{h.score:.2f}" for h in c.feedback[:_WHY_DEPTH]], [h.score for h in c.feedback])
    for collection, hits in sorted(c.unindexed.items()):
        add_list(f"not indexed yet {collection}", [key(collection, h.target_id) for h in hits], [f"{h.score:.0f} words" for h in hits[:_WHY_DEPTH]],
                 [h.score for h in hits])
    if c.entities:
        add_list("entity facts", [("fact", f.pk) for f in c.entity_facts], [f.subject.name for f in c.entity_facts])
    if q.changes and "fact" in q.kinds:
        add_list("changed in window", [("fact", f.pk) for f in c.changed])

    scores = fuse(lists, values)
    return Fused(scores=scores, ranked=sorted(scores, key=lambda item: -scores[item])[:pool], why=why)


def lanes_score(items: dict[Key, RecallItem], fused: Fused, *, q: Question) -> list[RecallItem]:
    """The hydrated items scored on the lanes with the scope's weights, best first; each says why.
    Before the lanes, the head's fused scores are preferred (`head_preferred`)."""
    scores = head_preferred(items, fused, q=q)
    best = max((scores[key] for key in items), default=1.0) or 1.0
    out: list[RecallItem] = []
    for key, item in items.items():
        item_lanes(item, similarity=scores[key] / best, q=q)
        item.why = fused.why.get(key, []) + item.why
        out.append(item)
    out.sort(key=lambda i: (-i.score, KINDS.index(i.kind), -scores[(i.kind, i.pk)]))
    return out


def item_lanes(item: RecallItem, *, similarity: float, q: Question) -> RecallItem:
    """`item`'s lanes and score with the scope's weights, its similarity given (0..1)."""
    importance = item.lanes.pop("_importance", None)
    moment = item.occurred_at if item.kind != "fact" else (item.valid_from or item.occurred_at)
    item.lanes = {
        "similarity": similarity,
        "importance": DEFAULT_IMPORTANCE if importance is None else importance,
        "recency": recency(moment, now=q.now, importance=importance),
    }
    item.score = lane_score(
        similarity=similarity, importance=importance, recency_value=item.lanes["recency"], weights=q.scope.weights,
    )
    return item


def head_preferred(items: dict[Key, RecallItem], fused: Fused, *, q: Question) -> dict[Key, float]:
    """The fused scores of the hydrated head, with two preferences for what was said (turns and
    episodes; facts are narrowed by their own rules):
    - by the one speaker the question names (`named_speaker`), × (1 + RETRIEVAL_SPEAKER_PREFERENCE),
      off by default: it did not hold in the cross-validation (docs/ARCHITECTURE.md). BM25's speaker
      boost acts on one list; the vector lists cannot see who spoke, and on five LOCOMO
      conversations 97 % of the evidence of questions naming one speaker (adversarial ones aside)
      is that speaker's while a third of the top 10 was the other's; but LOCOMO's adversarial
      questions name the wrong speaker on purpose, and × 1.1 won no more than it lost there;
    - said in the period the question names, or within `TIME_PREFERENCE_GRACE` after it, when the
      period does not narrow turns (RETRIEVAL_TIME_WINDOWS=facts): × (1 + RETRIEVAL_TIME_PREFERENCE).
      A preference, not a filter: the thing may have been told months later, which is why the
      filter was dropped;
    - telling a time (`tells_time`: "yesterday", "last week", a month) when the question asks when
      (`asks_when`), × (1 + RETRIEVAL_WHEN_PREFERENCE), off by default: the line that says when a
      thing happened, among the lines about that thing.
    Only the head is reordered (the rows loaded for the lanes), so no row is read for it."""
    scores = {key: fused.scores[key] for key in items}
    speaker_factor = 1.0 + settings.RETRIEVAL_SPEAKER_PREFERENCE
    time_factor = 1.0 + settings.RETRIEVAL_TIME_PREFERENCE
    when_factor = 1.0 + settings.RETRIEVAL_WHEN_PREFERENCE
    speaker = named_speaker(q.scope, q.text, q.speakers) if speaker_factor > 1.0 else ""
    window = q.window if time_factor > 1.0 and q.moment_window is None else None
    when = when_factor > 1.0 and asks_when(q.text)
    if not speaker and window is None and not when:
        return scores
    end = window.end + TIME_PREFERENCE_GRACE if window is not None and window.end is not None else None
    for key, item in items.items():
        if item.kind == "fact":
            continue
        if speaker and item.speaker == speaker:
            scores[key] *= speaker_factor
            item.why.append(f"said by {speaker}, whom the question names")
        moment = item.occurred_at
        if window is not None and moment is not None and (window.start is None or moment >= window.start) and (end is None or moment < end):
            scores[key] *= time_factor
            item.why.append(f"said in the question's period ({window.phrase})")
        if when and tells_time(item.text):
            scores[key] *= when_factor
            item.why.append("tells a time, and the question asks when")
    return scores


def sessions_spread(q: Question, ranked: list[RecallItem], *, cap: int, depth: int) -> list[RecallItem]:
    """RETRIEVAL_LIST_SESSION_CAP: for a question asking for several things (`asks_list`: "What
    books has Melanie read?"), at most `cap` of the first `depth` items from one session; the rest of
    that session's move down, after the first `depth`, in their order. Such a question's evidence is
    told in several sessions, and its top k tends to be one session's neighbouring lines (the
    windows vote for their centres). Other questions keep their order (capping every question lost:
    docs/ARCHITECTURE.md, "More lists for multi-hop")."""
    if cap <= 0 or not asks_list(q.text):
        return ranked
    counts: Counter = Counter()
    head: list[RecallItem] = []
    deferred: list[RecallItem] = []
    for at, item in enumerate(ranked):
        if len(head) >= depth:
            return head + deferred + ranked[at:]
        session = item.source.get("session") if item.kind != "fact" and item.source else None
        if session is not None and counts[session] >= cap:
            deferred.append(item)
            continue
        if session is not None:
            counts[session] += 1
        head.append(item)
    return head + deferred
