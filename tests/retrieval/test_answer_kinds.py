"""The kind of value a question asks for (issue 24, point 4, fourth pass): "when" wants a date,
"where" a place, "who" a person. A fact of another kind does not answer, and a span quoted from the
evidence is of the kind asked, with relative days resolved against the day the sentence was said.
Sentences are ours, in several tenses and persons; none is a scenario suite's."""

from datetime import UTC, datetime

import pytest

from retrieval.answer import answer
from retrieval.spans import date_span, expected_kind, fits
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

NOW = datetime(2026, 11, 30, tzinfo=UTC)
WEDNESDAY = datetime(2026, 3, 4, 12, tzinfo=UTC)


@pytest.mark.parametrize("question, kind", [
    ("When did the beta ship?", "date"), ("On what date does the freeze start?", "date"), ("What were the dates of the summit?", "date"),
    ("Since when have we used Drone?", "date"), ("Where is the summit?", "place"), ("Which city was the summit in?", "place"),
    ("Who owns payroll?", "person"), ("Who's our CFO?", "person"), ("What do we use for CI?", None), ("How often do we release?", None),
    ("Whose sign-off do big orders need?", "person"),  # stop 38
])
def test_a_question_says_the_kind_of_its_answer(question, kind):
    assert expected_kind(question) == kind


@pytest.mark.parametrize("sentence, said, near, span", [
    ("The freeze starts next Monday and lasts until 12 March.", WEDNESDAY, {"start"}, "9 March 2026"),  # the Monday after
    ("The freeze starts next Monday and lasts until 12 March.", WEDNESDAY, {"last"}, "12 March 2026"),  # said without its year: the year it falls in
    ("We went live yesterday.", WEDNESDAY, set(), "3 March 2026"),
    ("They've been on Drone since Monday.", WEDNESDAY, set(), "2 March 2026"),
    ("The migration is on Friday night, expect downtime.", WEDNESDAY, set(), "6 March 2026"),
    ("The migration happened on Friday night.", WEDNESDAY, set(), "27 February 2026"),
    ("The summit is 3 to 5 June in Tartu.", WEDNESDAY, set(), "3 to 5 June 2026"),
    ("It ends on 6 April, not 3 April.", WEDNESDAY, set(), "6 April 2026"),
    ("Demos are every other Thursday.", WEDNESDAY, set(), "every other Thursday"),
    ("Nobody said when.", WEDNESDAY, set(), ""),
])
def test_the_date_a_sentence_says_with_relative_days_resolved(sentence, said, near, span):
    assert date_span(sentence, said, near=near) == span


@pytest.mark.parametrize("kind, attribute, value, ok", [
    ("date", "app_tool", "Flutter", False), ("date", "launch_date", "3 June 2026", True), ("date", "decision", "ship on 3 June", True),
    ("place", "launch_date", "3 June 2026", False), ("place", "summit_place", "Tartu", True),
    ("person", "app_tool", "Flutter", False), ("person", "owns", "payroll", True),
    ("person", "standard_tune", "$99", False), ("person", "team_size", "12", False),  # an amount or a number is nobody (stop 38)
])
def test_a_fact_answers_only_a_question_of_its_kind(kind, attribute, value, ok):
    assert fits(kind, attribute=attribute, value=value) is ok


@pytest.mark.django_db
def test_when_is_answered_with_a_date_not_with_the_thing_s_tool(say):
    say("ana", "The mobile app is written in Kotlin.", "2025-02-02")
    say("ana", "The mobile app shipped today, finally.", "2025-06-11")
    first = answer(scope=say.cast.scope_a, question="When did the mobile app ship?", now=NOW).text.split("\n")[0]
    assert "11 June 2025" in first and "Kotlin" not in first


@pytest.mark.django_db
def test_a_relative_day_in_the_evidence_is_answered_as_a_day(say):
    say("ana", "Heads up: the database upgrade is next Tuesday, expect a short outage.", "2025-09-03")
    first = answer(scope=say.cast.scope_a, question="When was the database upgrade?", now=NOW).text.split("\n")[0]
    assert first == "9 September 2025"
