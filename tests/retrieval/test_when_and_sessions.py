"""The fifth round's rules (docs/ARCHITECTURE.md, "When and where it was told"), each off by
default and judged by the cross-validation (retrieval/cv.py): a "when" question's head prefers
the lines that tell a time (fusion.py: head_preferred), and sessions as documents, one more list of
turns smoothed by their session's similarity (vector.py: session_smoothed_candidates)."""

from datetime import UTC, datetime, timedelta

import pytest

from memories.models import Turn
from memories.services.ingest import ingest_session
from retrieval.cv import ALTERNATIVES, FUSION_SETTINGS, _list_stage
from retrieval.embedder import scope_embedder
from retrieval.indexing import index_pending
from retrieval.models import Collection
from retrieval.search import recall_evidence
from retrieval.search.fusion import Fused, lanes_score
from retrieval.search.question import asks_when, question_read, tells_time
from retrieval.search.results import RecallItem
from retrieval.vector import session_smoothed_candidates, vector_candidates

NOW = datetime(2024, 8, 1, tzinfo=UTC)


def test_a_when_question_is_read_from_its_asking_words():
    for asked in ("When did Ann go to the support group?", "How long has Bo had the shop?", "What year did Ann move?",
                  "Which month was the fair?"):
        assert asks_when(asked), asked
    for other in ("What did Ann do when it rained?", "Where is Bo now?", "What time-saving tips did Ann give?"):
        assert not asks_when(other), other


def test_a_line_tells_a_time_with_a_relative_phrase_a_weekday_a_month_or_a_year():
    for told in ("I went there yesterday!", "Last week I lost my job", "We met two days ago", "See you on Friday",
                 "In March we moved", "Back in 2019 …", "the past few weeks were long", "I have painted for three years"):
        assert tells_time(told), told
    for untold in ("We went camping with the kids", "It was a great time", "May I join?", "I love the last one"):
        assert not tells_time(untold), untold


def _ranked(query: str, rows: list[tuple[int, str, float]]) -> list[int]:
    """`rows`: (pk, text, fused score) of turns; the pks in the lanes' order."""
    q = question_read(scope=_ranked.scope, query=query, filters={"kinds": ["turn"]}, as_of=None, include_history=False,
                      now=NOW, speaker="", speakers=("Ann", "Bo"))
    when = NOW - timedelta(days=30)
    items = {("turn", pk): RecallItem(kind="turn", id=str(pk), text=text, score=0.0, lanes={"_importance": None}, speaker="Ann",
                                      occurred_at=when, pk=pk)
             for pk, text, _ in rows}
    fused = Fused(scores={("turn", pk): score for pk, _, score in rows}, ranked=[], why={})
    return [item.pk for item in lanes_score(items, fused, q=q)]


@pytest.mark.django_db
def test_a_when_questions_lines_that_tell_a_time_overtake_those_close_ahead_only_when_on(cast, settings):
    _ranked.scope = cast.scope_a
    rows = [(1, "The support group was so welcoming.", 1.0), (2, "I went to the support group yesterday.", 0.8),
            (3, "Yesterday I baked bread.", 0.5)]
    assert settings.RETRIEVAL_WHEN_PREFERENCE == 0.0  # off by default
    assert _ranked("When did Ann go to the support group?", rows) == [1, 2, 3]
    settings.RETRIEVAL_WHEN_PREFERENCE = 0.5
    assert _ranked("When did Ann go to the support group?", rows) == [2, 1, 3]  # 0.8 × 1.5 passes 1.0; 0.5 × 1.5 does not
    assert _ranked("Why did Ann go to the support group?", rows) == [1, 2, 3]  # not asked when: no preference


def _sessions(scope, actor, sessions: dict[str, list[str]]) -> None:
    start = datetime(2024, 5, 1, 9, tzinfo=UTC)
    for number, (session_id, said) in enumerate(sessions.items()):
        messages = [{"id": f"{session_id}t{i}", "speaker": "Ann" if i % 2 == 0 else "Bo", "text": text,
                     "occurred_at": start + timedelta(days=number, minutes=i)} for i, text in enumerate(said)]
        ingest_session(scope=scope, session_id=session_id, messages=messages, actor=actor, enqueue=False)
    index_pending(scope=scope)


# "I love it." twice, alike to the question, once in a session about something else (told first,
# so the plain list's tie puts it first) and once in a session about the quilt.
_TOLD = {
    "hike": ["The hike up the ridge was steep.", "I love it.", "The ridge trail had snow.", "Our boots got wet."],
    "quilt": ["My quilt has lavender squares.", "I love it.", "The quilt took a winter to sew.", "Quilt fabric is pricey."],
}


@pytest.mark.django_db(transaction=True)
def test_a_line_in_the_session_about_the_thing_asked_outranks_its_twin_told_among_other_things(cast, settings, monkeypatch):
    _sessions(cast.scope_a, cast.p_owner, _TOLD)
    embedder = scope_embedder(cast.scope_a)
    vector = embedder.embed(["Does Bo love the quilt?"])[0]
    where = {pk: (session, text) for pk, session, text in Turn.objects.filter(scope=cast.scope_a).values_list("pk", "session__external_id", "text")}
    plain = [h.target_id for h in vector_candidates(scope=cast.scope_a, query_vector=vector, embedder=embedder,
                                                    collections=[Collection.TURN], limit=50, exact=True)[Collection.TURN]]
    twins = [pk for pk in plain if where[pk][1] == "I love it."]
    assert [where[pk][0] for pk in twins] == ["hike", "quilt"]  # equally near: the plain list orders them by id
    smoothed = session_smoothed_candidates(scope=cast.scope_a, query_vector=vector, embedder=embedder, weight=0.5, limit=50)
    assert len(smoothed) == 8 and [h.similarity for h in smoothed] == sorted((h.similarity for h in smoothed), reverse=True)
    assert [where[h.target_id][0] for h in smoothed if where[h.target_id][1] == "I love it."] == ["quilt", "hike"]
    without = session_smoothed_candidates(scope=cast.scope_a, query_vector=vector, embedder=embedder, weight=0.0, limit=50)
    assert [h.target_id for h in without if h.target_id in twins] == twins  # no session weight: the plain order

    def lists() -> set[str]:
        items = recall_evidence(scope=cast.scope_a, query="Does Bo love the quilt?", k=8, filters={"kinds": ["turn"]}, now=NOW).items
        return {why.split(" #")[0] for item in items for why in item.why if "#" in why}

    assert "vector turn smoothed by its session" not in lists()  # off by default
    settings.RETRIEVAL_SESSION_SMOOTHING = 0.5
    assert "vector turn smoothed by its session" in lists()
    # A scope searched through the graph (too large to scan exactly) gets no such list.
    monkeypatch.setattr("retrieval.search.candidates.vector_search_exact", lambda **kwargs: False)
    assert "vector turn smoothed by its session" not in lists()


def test_the_fifth_rounds_rules_are_cross_validated_each_at_its_stage():
    alternatives = {c.name: c for c in ALTERNATIVES}
    assert alternatives["when: time told × 1.5"].settings == {"RETRIEVAL_WHEN_PREFERENCE": 0.5}
    assert alternatives["when: time told × 2"].settings == {"RETRIEVAL_WHEN_PREFERENCE": 1.0}
    assert "RETRIEVAL_WHEN_PREFERENCE" in FUSION_SETTINGS  # re-fuses the lists gathered once
    assert _list_stage(alternatives["when: time told × 1.5"]) == ()
    assert _list_stage(alternatives["session list"]) == (("RETRIEVAL_SESSION_SMOOTHING", 0.5),)  # its lists gathered anew
