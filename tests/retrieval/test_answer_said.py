"""When no fact answers (issue 24, point 4, the seventh pass): the span is never the speaker's "I"
nor a bare number for "where"."""

from datetime import UTC, datetime

import pytest

from retrieval.answer import answer
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def first_line(say, question):
    return answer(scope=say.cast.scope_a, question=question, now=NOW).text.split("\n")[0]


def test_the_speaker_is_no_span(say):
    say("maya", "whenever I am off sick Priya covers the pager rota", "2025-03-02")
    assert first_line(say, "Who covers the pager rota when Maya is off sick?") == "Priya"


def test_a_number_alone_is_no_place(say):
    say("tomasz", "before boarding we gather at gate 3 by the ferry office", "2025-03-02")
    assert first_line(say, "Where do we gather before boarding?") != "3"

