"""The fifth round's rule (docs/ARCHITECTURE.md, "When and where it was told"), off by default
and judged by the cross-validation (retrieval/cv.py): a "when" question's head prefers the lines
that tell a time (fusion.py: head_preferred)."""

from datetime import UTC, datetime, timedelta

import pytest

from retrieval.cv import ALTERNATIVES, FUSION_SETTINGS, _list_stage
from retrieval.search.fusion import Fused, lanes_score
from retrieval.search.question import asks_when, question_read, tells_time
from retrieval.search.results import RecallItem

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


def _ranked(scope, query: str, rows: list[tuple[int, str, float]]) -> list[int]:
    """`rows`: (pk, text, fused score) of turns; the pks in the lanes' order."""
    q = question_read(scope=scope, query=query, filters={"kinds": ["turn"]}, as_of=None, include_history=False,
                      now=NOW, speaker="", speakers=("Ann", "Bo"))
    when = NOW - timedelta(days=30)
    items = {("turn", pk): RecallItem(kind="turn", id=str(pk), text=text, score=0.0, lanes={"_importance": None}, speaker="Ann",
                                      occurred_at=when, pk=pk)
             for pk, text, _ in rows}
    fused = Fused(scores={("turn", pk): score for pk, _, score in rows}, ranked=[], why={})
    return [item.pk for item in lanes_score(items, fused, q=q)]


@pytest.mark.django_db
def test_a_when_questions_lines_that_tell_a_time_overtake_those_close_ahead_only_when_on(cast, settings):
    rows = [(1, "The support group was so welcoming.", 1.0), (2, "I went to the support group yesterday.", 0.8),
            (3, "Yesterday I baked bread.", 0.5)]
    assert settings.RETRIEVAL_WHEN_PREFERENCE == 0.0  # off by default
    assert _ranked(cast.scope_a, "When did Ann go to the support group?", rows) == [1, 2, 3]
    settings.RETRIEVAL_WHEN_PREFERENCE = 0.5
    assert _ranked(cast.scope_a, "When did Ann go to the support group?", rows) == [2, 1, 3]  # 0.8 × 1.5 passes 1.0; 0.5 × 1.5 does not
    assert _ranked(cast.scope_a, "Why did Ann go to the support group?", rows) == [1, 2, 3]  # not asked when: no preference


def test_the_fifth_rounds_rules_are_cross_validated_each_at_its_stage():
    alternatives = {c.name: c for c in ALTERNATIVES}
    assert alternatives["when: time told × 1.5"].settings == {"RETRIEVAL_WHEN_PREFERENCE": 0.5}
    assert alternatives["when: time told × 2"].settings == {"RETRIEVAL_WHEN_PREFERENCE": 1.0}
    assert "RETRIEVAL_WHEN_PREFERENCE" in FUSION_SETTINGS  # re-fuses the lists gathered once
    assert _list_stage(alternatives["when: time told × 1.5"]) == ()
    assert "session list" not in alternatives  # lost in every fold: not kept as code
