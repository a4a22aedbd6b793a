""""Where is X from?" asks for one person's origin (is_from, then where they grew up or were born), not
their home (the ninth pass): before, no question pattern named an origin, so the question fell to
whatever fact about X the recall ranked first ("rhiannon lives in Oxenholme"), and "which city is X
originally from?" to lives_in ("city"). A question that names no one is no one's origin."""

import pytest

from retrieval.intents import attributes_asked
from tests.retrieval.test_answer_span import lines, say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

pytestmark = pytest.mark.django_db
ORIGIN = ("is_from", "grew_up_in", "born_in")


@pytest.mark.parametrize("question", [
    "Where's ana from?",
    "Where is Bogdan from?",
    "where was Ana from?",
    "Which city is Ana originally from?",
    "What country is bogdan from?",
    "Where does Ana come from?",
])
def test_where_someone_is_from_asks_their_origin(question):
    assert attributes_asked(question) == ORIGIN


@pytest.mark.parametrize("question", [
    "Where do we get our hops from?",
    "Where did the malt come from?",
    "Where is the stock room moving from?",
    "Where does Ana live?",
])
def test_a_thing_or_a_home_is_no_origin(question):
    assert attributes_asked(question) != ORIGIN


@pytest.mark.parametrize("said, question, origin", [
    ("I'm from Gdynia originally, live in Hexham with my wife", "Where's ana from?", "Gdynia"),
    ("grew up in Wakefield, been in Gateshead since 2019", "Where is ana from?", "Wakefield"),
    ("Ana here! born in Lagos, now living in Leeds", "Which city is ana originally from?", "Lagos"),
])
def test_an_origin_is_answered_by_it_not_by_the_home(say, said, origin, question):
    say("ana", "I moved to Morpeth last spring", "2025-06-02")
    say("ana", said, "2025-06-09")
    first = lines(say, question)[0]
    assert origin in first and "Morpeth" not in first
