"""Hydration: the rows behind the fused keys become RecallItems, the ineligible ones dropped
(retrieval/search/eligibility.py), with where each came from: the public episode id, the session
and turn external ids."""

from collections.abc import Callable
from datetime import datetime

from django.db import connection

from memories.models import CONSOLIDATION_SOURCE, Episode, Fact, FactStatus
from memories.normalize import normalize_name
from retrieval.search.eligibility import fact_eligible, moment_eligible, turn_moment_sql
from retrieval.search.fusion import Key
from retrieval.search.question import Question
from retrieval.search.results import KINDS, RecallItem

# How much a consolidation summary's importance lane is lifted (0.03 of the score at the default
# weights): enough to put it above the originals it condensed when they match as well, not more.
SUMMARY_PREFERENCE = 0.1


def items_hydrate(q: Question, keys: list[Key]) -> dict[Key, RecallItem]:
    """The eligible rows behind `keys`, in the order of `keys`; importance waits in the lanes
    under "_importance" for the lane scoring."""
    ids = {kind: [pk for kind_, pk in keys if kind_ == kind] for kind in KINDS}
    loaded: dict[Key, RecallItem] = {}
    if ids["fact"]:
        facts = list(Fact.objects.in_scope(q.scope).filter(fact_eligible(q), pk__in=ids["fact"]).select_related("subject"))
        # Their source episodes in a second, small query: one five-table join costs more to plan.
        source_ids = {f.source_episode_id for f in facts if f.source_episode_id}
        sources = (
            {e.pk: e for e in Episode.objects.in_scope(q.scope).filter(pk__in=source_ids).select_related("turn", "session")}
            if source_ids else {}
        )
        for f in facts:
            episode = sources.get(f.source_episode_id)
            item = RecallItem(
                kind="fact", id=str(f.public_id), text=f.sentence, score=0.0, lanes={"_importance": f.importance},
                status=f.status, valid_from=f.valid_from, valid_to=f.valid_to, occurred_at=f.valid_from or f.created_at,
                subject=f.subject.name, attribute=f.attribute, value=f.value, pk=f.pk,
                source=_source(episode=episode, session=episode.session if episode else None, turn=episode.turn if episode else None),
            )
            if f.status == FactStatus.SUPERSEDED:
                item.why.append(f"superseded: held from {_day(f.valid_from)} to {_day(f.valid_to)}")
            loaded[("fact", f.pk)] = item
    if ids["episode"]:
        episodes = Episode.objects.in_scope(q.scope).filter(moment_eligible(q), pk__in=ids["episode"]).select_related("turn", "session")
        for e in episodes:
            if _other_speaker(q, e.speaker):
                continue
            item = RecallItem(
                kind="episode", id=str(e.public_id), text=e.text, score=0.0, lanes={"_importance": e.importance},
                occurred_at=e.occurred_at, speaker=e.speaker, pk=e.pk, source=_source(episode=e, session=e.session, turn=e.turn),
            )
            # Consolidation (memories/services/consolidate.py): a summary ranks a little above the
            # episodes it condensed (its importance lane lifted by SUMMARY_PREFERENCE), which stay found.
            if e.source == CONSOLIDATION_SOURCE:
                item.lanes["_importance"] = min(1.0, (e.importance or 0.0) + SUMMARY_PREFERENCE)
                item.why.append("a summary of consolidated episodes")
            elif e.consolidated_into_id:
                item.why.append("condensed into a summary, kept")
            loaded[("episode", e.pk)] = item
    if ids["turn"]:
        # One statement, only the columns an item shows: turns are most of an evidence search's
        # head. In SQL with the moment rule compiled once (`turn_moment_sql`): building the
        # queryset cost more than the database's own work (0.3 ms for 30 turns).
        rule, params = turn_moment_sql(q)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT memories_turn.id, memories_turn.public_id, memories_turn.text, memories_turn.occurred_at,"
                " memories_turn.speaker, memories_turn.external_id, memories_session.external_id, memories_episode.public_id,"
                " memories_episode.importance, next.id, next.speaker, previous.id FROM memories_turn"
                " JOIN memories_session ON memories_session.id = memories_turn.session_id"
                " LEFT JOIN memories_episode ON memories_episode.turn_id = memories_turn.id"
                # The next turn of the session (`replies_follow`): one probe of the (session,
                # position) index per row.
                " LEFT JOIN LATERAL (SELECT n.id, n.speaker FROM memories_turn n WHERE n.session_id = memories_turn.session_id"
                " AND n.position > memories_turn.position ORDER BY n.position LIMIT 1) next ON true"
                # And the one before it (the learned order's features, retrieval/rerank.py).
                " LEFT JOIN LATERAL (SELECT b.id FROM memories_turn b WHERE b.session_id = memories_turn.session_id"
                " AND b.position < memories_turn.position ORDER BY b.position DESC LIMIT 1) previous ON true"
                f" WHERE memories_turn.scope_id = %(scope)s AND memories_turn.id = ANY(%(ids)s){rule}",
                {"scope": q.scope.pk, "ids": ids["turn"], **params},
            )
            turns = cursor.fetchall()
        for pk, public_id, text, occurred_at, speaker, external_id, session_id, episode_id, importance, next_id, next_speaker, previous_id in turns:
            if _other_speaker(q, speaker):
                continue
            loaded[("turn", pk)] = RecallItem(
                kind="turn", id=str(public_id), text=text, score=0.0, lanes={"_importance": importance},
                occurred_at=occurred_at, speaker=speaker, pk=pk,
                source={"episode": str(episode_id) if episode_id else None, "session": session_id, "turn": external_id},
                next_turn=(next_id, next_speaker) if next_id is not None else None, previous_turn=previous_id,
            )
    return {key: loaded[key] for key in keys if key in loaded}


def replies_follow(q: Question, ranked: list[RecallItem], *, depth: int, lanes: Callable[[RecallItem], RecallItem]) -> list[RecallItem]:
    """A turn among the first `depth` of `ranked` that asks something ("?") is followed by the
    next turn of its session when another speaker said it: the reply, moved up from lower in
    `ranked` or loaded (if eligible). A question asked in the conversation ("What gave you the
    idea for the colours?") matches a question about it better than its answer does, and the
    answer is the next line; the neighbouring windows' votes reach it only when it also shares
    words with the question. A reply takes its question's score, so the list stays in order;
    `lanes` scores a reply loaded here (it was not in the head). RETRIEVAL_REPLY_FOLLOWS."""
    asking = {
        item.pk: item.next_turn[0] for item in ranked[:depth]
        if item.kind == "turn" and "?" in item.text and item.next_turn is not None and item.next_turn[1] != item.speaker
    }
    if not asking:
        return ranked
    placed = {item.pk: item for item in ranked if item.kind == "turn"}
    missing = [("turn", pk) for pk in asking.values() if pk not in placed]
    for item in items_hydrate(q, missing).values() if missing else ():
        placed[item.pk] = lanes(item)
    out: list[RecallItem] = []
    seen: set[tuple[str, int]] = set()
    for rank, item in enumerate(ranked, start=1):
        if (item.kind, item.pk) in seen:
            continue
        out.append(item)
        seen.add((item.kind, item.pk))
        reply = placed.get(asking.get(item.pk)) if item.kind == "turn" else None
        if reply is not None and ("turn", reply.pk) not in seen:
            reply.score = item.score
            reply.why.append(f"the reply to a question ranked #{rank}")
            out.append(reply)
            seen.add(("turn", reply.pk))
    return out


def _other_speaker(q: Question, speaker: str) -> bool:
    """The `speaker` filter, compared as names are (case, spacing, framing punctuation)."""
    return bool(q.speaker_filter) and normalize_name(speaker) != normalize_name(q.speaker_filter)


def _source(*, episode, session, turn) -> dict[str, str | None]:
    return {
        "episode": str(episode.public_id) if episode else None,
        "session": session.external_id if session else None,
        "turn": turn.external_id if turn else None,
    }


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment else "?"
