"""A question in the first person singular is about its asker (stop 43, issue 24): when no fact answers, the span is
taken only from what the asker said or what names them, never from someone else's words about themself ("growing up in
Spokane …" said by Dana is no answer to Owen's "where did I grow up?")."""

from datetime import UTC, datetime

import pytest

from retrieval.answer import answer
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def first_line(say, question, asker):
    return answer(scope=say.cast.scope_a, question=question, speaker=asker, now=NOW).text.split("\n")[0]


def test_someone_else_s_words_about_themself_do_not_answer_the_asker(say):
    say("dana", "Growing up in Spokane our ski day was one rope tow, so this trip is luxury", "2024-01-24")
    assert "Spokane" not in first_line(say, "Where did I grow up?", "owen")
    assert "Spokane" in first_line(say, "Where did I grow up?", "dana")  # Dana's own words answer Dana


def test_the_asker_s_own_words_answer_over_someone_else_s(say):
    say("dana", "Growing up in Spokane our ski day was one rope tow, so this trip is luxury", "2024-01-24")
    say("owen", "ha, growing up in Omaha we had no ski days at all", "2024-01-24")
    assert "Omaha" in first_line(say, "Where did I grow up?", "owen")


def test_words_that_name_the_asker_answer_them(say):
    say("dana", "when Owen was growing up in Omaha there was no snow, he keeps telling us", "2024-01-24")
    assert "Omaha" in first_line(say, "Where did I grow up?", "owen")


def test_who_to_ask_is_answered_by_someone_who_says_ask_me(say):
    say("ravi", "The billing database is my baby, so please ask me before adding tables.", "2024-03-05")
    reply = answer(scope=say.cast.scope_a, question="Who do I need to ask before adding tables to the billing database?",
                   speaker="owen", now=NOW).text
    assert "ravi" in reply.lower()
