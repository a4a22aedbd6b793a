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
