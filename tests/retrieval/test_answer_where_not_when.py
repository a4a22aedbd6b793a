"""A "where …?" question is not answered by a fact that says only when (tenth pass, issue 24): "the away day 2024 is
Friday 28 June" holds the date, and the place is in what was said ("… at Dyrham Park"), not in that fact."""

import pytest

from retrieval.spans import expected_kind, fits, only_when
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)
from tests.retrieval.test_answer_values import ask


@pytest.mark.parametrize("value, when", [
    ("Friday 28 June", True), ("Tuesdays 10am", True), ("every other Monday", True), ("Wednesday 4 March 2026", True), ("9:30", True),
    ("Spike Island", False), ("the Green Room", False), ("June Street", False), ("12 Friday Lane", False),
])
def test_a_value_that_says_only_when(value, when):
    assert only_when(value) is when
    assert fits("place", attribute="away_day_2024", value=value) is not when
    assert fits("date", attribute="away_day_2024", value=value) or not when


@pytest.mark.django_db
@pytest.mark.parametrize("said, question, place", [
    ("The 2025 hackday is Wednesday 9 July at the Corn Exchange", "Where was the 2025 hackday?", "Corn Exchange"),
    ("Staff photo day: Monday 3 March, in the Abbey Room", "Where is staff photo day?", "Abbey Room"),
    ("our summer social will be Friday 11 July at Hadley Manor", "Where was the summer social?", "Hadley Manor"),
    ("Book club meets Tuesdays at 7pm in the Lamb", "Where does the book club meet?", "Lamb"),
])
def test_a_where_question_is_answered_by_the_place_not_the_date(say, said, question, place):
    say("maya", said, "2025-03-02")
    assert ask(say, question).split("\n")[0] == place


@pytest.mark.parametrize("question", ["Which pub did we go to after the launch?", "Which street is the new office on?",
                                      "Which hotel did the sales team stay at?", "Which theatre does the tour open at?",
                                      "Which car park are the permits for now?", "At which venue was the 2024 summit?"])
def test_which_pub_street_hotel_theatre_or_car_park_asks_for_a_place(question):
    assert expected_kind(question) == "place"
    assert expected_kind("Which area was Tamsin the product manager for?") is None  # an area of work, not a place


@pytest.mark.django_db
def test_which_hotel_is_answered_by_the_place_not_the_date(say):
    say("maya", "The 2025 sales kick-off is Monday 6 October at the Grand Hotel", "2025-03-02")
    assert ask(say, "Which hotel was the 2025 sales kick-off at?").split("\n")[0] == "Grand Hotel"
