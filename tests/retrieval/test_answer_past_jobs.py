"""A past employer (issue 24, sixth pass): "Before Bramble I was at Glovo" is worked_at, asked by
"where did X work before …", "previous employer", "which company did X join us from"; a question
about now ("which office does X work from?") is not answered by it."""

import pytest

from retrieval.answer import question_attributes


@pytest.mark.parametrize("question, expected", [
    ("Where did Joaquin work before Bramble?", ("worked_at",)),
    ("Where was Rohan working before he joined?", ("worked_at",)),
    ("What was Olu's previous employer?", ("worked_at",)),
    ("Which company did Liesel join us from?", ("worked_at",)),
])
def test_a_past_employer_is_asked_in_several_phrasings(question, expected):
    assert question_attributes(question, _Facts({"worked_at", "role", "lives_in"})) == expected


@pytest.mark.parametrize("question", ["Which office does Liesel work from?", "Where does Joaquin work?"])
def test_a_question_about_now_is_not_answered_by_a_past_employer(question):
    assert "worked_at" not in question_attributes(question, _Facts({"worked_at", "role", "lives_in"}))


class _Facts:
    """The few queryset calls question_attributes makes, over a fixed set of attributes."""

    def __init__(self, attributes: set[str]):
        self.attributes = attributes

    def order_by(self, *args):
        return self

    def values_list(self, *args, flat=False):
        return self

    def distinct(self):
        return sorted(self.attributes)

    def __getitem__(self, item):
        return sorted(self.attributes)[item]

    def __iter__(self):
        return iter(sorted(self.attributes))

    def filter(self, *args, **kwargs):
        wanted = kwargs.get("attribute")
        return _Facts({a for a in self.attributes if wanted is None or a == wanted})

    def exists(self):
        return bool(self.attributes)


@pytest.mark.parametrize("question", ["Which room do we use for client meetings?", "What do we use for video calls with clients?"])
def test_a_one_word_attribute_is_not_asked_by_a_word_that_qualifies_another(question):
    """(stop 42) "client" is a thing the team holds a fact of; "client meetings" and "calls with clients" ask about others."""
    assert "client" not in question_attributes(question, _Facts({"client", "lives_in"}))


@pytest.mark.parametrize("question", ["Who is the client for the Canal Wharf pavilion?", "Who's our client now?"])
def test_a_one_word_attribute_is_asked_by_the_thing_it_names(question):
    assert question_attributes(question, _Facts({"client", "lives_in"})) == ("client",)


def test_a_past_event_asked_with_a_verb_in_ed_is_asked_as_of_its_year():
    """(stop 42) "which bar hosted the 2024 Christmas party?" asks as the memory stood at the end of 2024."""
    from datetime import UTC, datetime

    from retrieval.temporal import as_of_in_question

    now = datetime(2026, 11, 30, tzinfo=UTC)
    assert as_of_in_question("Which bar hosted the 2024 Christmas party?", now=now).year == 2024
    assert as_of_in_question("Which bar hosts the Christmas party?", now=now) is None
