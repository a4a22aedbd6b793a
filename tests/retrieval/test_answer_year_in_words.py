"""A fact whose value names a year only among the words of a thing ("multi-site stock is the big 2025 feature") is no
answer to "when …?": the day the evidence says it happened is (stop 48)."""

from datetime import UTC, datetime

import pytest

from retrieval.answer import answer
from retrieval.spans import fits
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)


@pytest.mark.parametrize("value, answers", [
    ("the big 2025 feature", False),
    ("our 2026 roadmap item", False),
    ("in 2025", True),
    ("12 May 2025", True),
    ("every Tuesday", True),
])
def test_a_year_among_words_of_a_thing_does_not_answer_when(value, answers):
    assert fits("date", attribute="multi_site_stock", value=value) is answers


@pytest.mark.django_db
def test_when_it_launched_is_the_day_said_not_the_year_of_its_plan(say):
    say("hannah", "decided with Lucia: multi-site stock is the big 2025 feature", "2024-12-02")
    say("hannah", "multi-site stock launched today across both depots 🎉", "2025-09-09")
    reply = answer(scope=say.cast.scope_a, question="When did multi-site stock launch?", now=datetime(2026, 11, 20, tzinfo=UTC)).text
    assert reply.split("\n")[0] == "9 September 2025"
