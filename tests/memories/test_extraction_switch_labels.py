"""A switch whose statement names no function takes the function its label names (the ninth pass):
"bar tills: we swapped Square for Zettle" is the bar tills' tool, not a replacement with no
function, whether the label is a function the rules know or a thing said in a few plain nouns; a
generic label ("Personal news: …"), a team event, people or someone addressed by name is no
function. A switch under way in the passive ("Square is being replaced by Zettle", "… is being
swapped for …") is read as the passive switch is. A tool said to go live beside one said to be gone
("Zettle is live, Square is read-only from today") is a switch from the gone one. Each shape in
several tenses and persons, in sentences of our own; each failed before this change."""

from functools import partial

import pytest

from memories.extraction.vocabulary import REPLACEMENT_ATTRIBUTE
from memories.models import Fact, FactStatus
from tests.memories.reading import TEAM, read
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

pytestmark = pytest.mark.django_db

triples = partial(read, people=("maya", "kwabena", "sunniva"), previous=True)


# Tills are the point of sale since stop 43: one name for the function, "pos".
@pytest.mark.parametrize("text, expected", [
    ("bar tills: we swapped Square for Zettle", (TEAM, "bar_pos_tool", "Zettle", "Square")),
    ("Bar tills: we have moved from Square to Zettle", (TEAM, "bar_pos_tool", "Zettle", "Square")),
    ("bar tills: we ditched Square for Zettle last month", (TEAM, "bar_pos_tool", "Zettle", "Square")),
    ("bar tills: Square was replaced by Zettle", (TEAM, "bar_pos_tool", "Zettle", "Square")),
    ("stock counts: Excel is being replaced by Airtable", (TEAM, "stock_count_tool", "Airtable", "Excel")),
    ("expense claims: we replaced Expensify with Pleo", (TEAM, "expense_claim_tool", "Pleo", "Expensify")),
    ("the rota: we moved from Rotacloud to Deputy", (TEAM, "rota_tool", "Deputy", "Rotacloud")),
    ("video calls: we switched from Zoom to Teams", (TEAM, "video_tool", "Teams", "Zoom")),
])
def test_a_label_names_the_function_of_a_switch_under_it(text, expected):
    assert expected in triples(text)


@pytest.mark.parametrize("text", [
    "Personal news: we switched from Zoom to Teams",
    "Random one: we swapped Square for Zettle",
    "Kwabena: we swapped Square for Zettle",
    "standup: we moved from Zoom to Teams",
    "kids: we swapped Netflix for Disney",
])
def test_a_label_that_names_no_function_leaves_the_switch_without_one(text):
    facts = triples(text)
    assert facts and all(attribute == REPLACEMENT_ATTRIBUTE for _, attribute, _, _ in facts)


@pytest.mark.parametrize("text, expected", [
    ("Square is being replaced by Zettle", (TEAM, REPLACEMENT_ATTRIBUTE, "Zettle", "Square")),
    ("Square is being swapped for Zettle in both bars from 1 August", (TEAM, REPLACEMENT_ATTRIBUTE, "Zettle", "Square")),
    ("Rotacloud is being replaced by Deputy next month, the app is better", (TEAM, REPLACEMENT_ATTRIBUTE, "Deputy", "Rotacloud")),
    ("the old Excel sheets were being swapped out for Airtable", None),
])
def test_a_switch_under_way_in_the_passive(text, expected):
    if expected is None:
        assert all(attribute != REPLACEMENT_ATTRIBUTE for _, attribute, _, _ in triples(text))  # no tool named as the subject
    else:
        assert expected in triples(text)


@pytest.mark.parametrize("text, expected", [
    ("Zettle is live, Square is read-only from today", ("Zettle", "Square")),
    ("Deputy went live 🎉 Rotacloud is read-only until the end of the month, then cancelled", ("Deputy", "Rotacloud")),
    ("Airtable has gone live. Excel 365 is switched off", ("Airtable", "Excel 365")),
    ("Pleo is now live and Expensify is gone, snap your receipts in the app", ("Pleo", "Expensify")),
])
def test_a_tool_gone_live_beside_one_gone_is_a_switch_from_it(text, expected):
    new, old = expected
    assert (TEAM, REPLACEMENT_ATTRIBUTE, new, old) in triples(text)


@pytest.mark.parametrize("text, team", [
    ("Zettle is live", TEAM),  # nothing said gone: a launch, not a switch
    ("Season 5 is live, Square is read-only", None),  # a personal chat switches no team's tools
    ("Zettle is live and Square is gone, and Pleo is live too", TEAM),  # two gone live: which replaced it is not said
])
def test_a_tool_gone_live_alone_is_no_switch(text, team):
    assert all(attribute != REPLACEMENT_ATTRIBUTE or value not in {"Zettle", "Season 5", "Pleo"}
               for _, attribute, value, _ in triples(text, team=team))



def held(say, attribute):
    return [(f.value, f.status) for f in Fact.objects.in_scope(say.cast.scope_a).filter(attribute=attribute).order_by("id")]


def test_a_tool_gone_live_supersedes_the_one_gone(say):
    say("bilal", "the bar tills are on Square", "2025-02-10")
    say("bilal", "Zettle is live 🎉 Square is read-only from today", "2025-08-11")
    assert held(say, "bar_pos_tool") == [("Square", FactStatus.SUPERSEDED), ("Zettle", FactStatus.ACTIVE)]


def test_a_labelled_switch_supersedes_the_tool_the_thing_had(say):
    say("bilal", "the bar tills are on Square", "2025-02-10")
    say("bilal", "bar tills: we're done with it, we swapped Square for Zettle", "2025-08-11")
    assert held(say, "bar_pos_tool") == [("Square", FactStatus.SUPERSEDED), ("Zettle", FactStatus.ACTIVE)]
