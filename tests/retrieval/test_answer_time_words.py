"""A question's words of time ("these days", "nowadays", "currently") say when, not what (the ninth
pass): the sentence quoted when no fact answers is chosen by the question's other words, so "who
handles the courier contracts these days?" quotes who took the contracts over, not someone's "living
in Morpeth these days"."""

import pytest

from tests.retrieval.test_answer_span import lines, say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("question", [
    "Who handles the courier contracts these days?",
    "Who handles the courier contracts nowadays?",
    "Who currently handles the courier contracts?",
])
def test_words_of_time_choose_no_sentence(say, question):
    say("marta", "and Wiebke is handling the courier contracts now, ask her", "2025-06-16")
    say("bogdan", "hiya, Bogdan, originally from Gdynia, living in Morpeth these days", "2025-07-01")
    answer = "\n".join(lines(say, question))
    assert "Wiebke" in answer and "Morpeth" not in answer


def test_a_year_in_the_question_is_not_answered_by_a_day_of_another_year(say):
    """(stop 42) "when is the 2026 hackathon?" after "the hackathon is in Rotterdam on 12 June 2025": the day of 2025
    answers nothing of 2026; the sentence that names this year's does."""
    say("bram", "The hackathon is in Rotterdam on 12 June 2025.", "2025-03-03")
    say("bram", "Big news: we're doing it again, in Eindhoven, 18 May 2026 for the hackathon", "2026-04-06")
    answer = "\n".join(lines(say, "When is the 2026 hackathon?"))
    assert "12 June 2025" not in answer.splitlines()[0]


def test_the_closest_memories_quoted_for_a_question_about_now_elide_what_they_say_is_gone(say):
    """(stop 42) no fact answers, so the closest memories are quoted; the tool the statement says was ditched is not
    offered beside the current one, and a question about then keeps it."""
    say("sione", "Ditched Premiere for DaVinci Resolve on the video side, the licence costs were silly", "2025-03-03")
    now = "\n".join(lines(say, "What program does the team cut its clips in these days?"))
    assert "DaVinci Resolve" in now and "Premiere" not in now
    before = "\n".join(lines(say, "What program did the team cut its clips in before?"))
    assert "Premiere" in before
