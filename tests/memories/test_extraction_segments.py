"""The offline extractor follows a statement's phrases, not only its phrasings (issue 24, point 2,
the seventh pass): a clause that gives nothing is read again phrase by phrase, so a condition or an
aside after a comma costs only itself ("I live in Whitby, twenty minutes out if the bypass is clear");
a second thing's place after a comma is a statement of its own; an emoji between words ends a
sentence; a value ends where its phrase does ("Porto originally", "Whitby btw"); a home is a place
name, not a thing with common nouns after a name; a thing said in common nouns that lives in, goes
through or comes from a name is served by that tool; "next to the kitchen" is said whole, not as "next". Each shape in
several tenses and persons, in sentences of our own; each failed before this change."""

from functools import partial

import pytest

from tests.memories.reading import read

triples = partial(read, previous=True)


@pytest.mark.parametrize("text, expected", [
    ("I live in Whitby, twenty minutes from the office if the bypass is clear", ("maya", "lives_in", "Whitby", None)),
    ("I've lived in Whitby for years, twenty minutes out if the bypass behaves", ("maya", "lives_in", "Whitby", None)),
    ("Ana lives in Whitby, close to the harbour if you know it", ("Ana", "lives_in", "Whitby", None)),
    ("I'm from Porto originally, came to Leeds for work and never left", ("maya", "is_from", "Porto", None)),
    ("Ana is from Porto, came over for university and never went back", ("Ana", "is_from", "Porto", None)),
    ("I grew up in Porto, a long way from here if you drive", ("maya", "grew_up_in", "Porto", None)),
])
def test_a_condition_or_aside_after_a_comma_costs_only_itself(text, expected):
    assert triples(text) == [expected]
    assert triples(text, team=None) == [expected]  # in a personal chat too, where the first phrase is read when a later one is a condition


def test_in_a_personal_chat_a_tail_without_a_condition_is_not_read_again():
    # a personal chat's commas are mostly chatter: only a condition, a wish or a plan makes the first phrase worth reading alone
    assert triples("Statsig is the platform now, no more scripts", team=None) == []


@pytest.mark.parametrize("text, expected", [
    ("our support desk is at Canal Wharf in Leeds, the finance office is at King Street in York",
     [("Orbit", "support_desk_place", "Canal Wharf, Leeds", None), ("Orbit", "finance_office_place", "King Street, York", None)]),
    ("our depot was at Dock Road in Hull, our showroom is in Beverley",
     [("Orbit", "depot_place", "Dock Road, Hull", None), ("Orbit", "showroom_place", "Beverley", None)]),
    ("Orbit's depot has been at Dock Road in Hull since May, Acme head office is at Mill Lane in York",
     [("Orbit", "depot_place", "Dock Road, Hull", None), ("Orbit", "acme_head_office_place", "Mill Lane, York", None)]),
])
def test_a_second_place_after_a_comma_is_a_statement_of_its_own(text, expected):
    assert triples(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("we've moved tickets from Jira to Linear 🎉 file everything there from now on", ("Orbit", "ticket_tool", "Linear", "Jira")),
    ("we moved tickets from Jira to Linear 🎉🎉 file everything there", ("Orbit", "ticket_tool", "Linear", "Jira")),
    ("Priya has left Acme 😢 from today I report to Tom Hale", ("maya", "reports_to", "Tom Hale", None)),
    ("Priya left Acme 😢 I will report to Tom Hale", ("maya", "reports_to", "Tom Hale", None)),
])
def test_an_emoji_between_words_ends_the_sentence(text, expected):
    assert expected in triples(text)
    assert not any("🎉" in v or "😢" in v or "file everything" in v for _, _, v, _ in triples(text))


@pytest.mark.parametrize("text, expected", [
    ("I'm from Porto originally", ("maya", "is_from", "Porto", None)),
    ("Ana is from Porto originally", ("Ana", "is_from", "Porto", None)),
    ("I live in Whitby btw", ("maya", "lives_in", "Whitby", None)),
    ("I've lived in Whitby ever since", ("maya", "lives_in", "Whitby", None)),
    ("I'm based in the Leeds office", ("maya", "lives_in", "Leeds", None)),
])
def test_a_value_ends_where_its_phrase_does(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text", [
    "we're moving to Acme torque wrenches this month",
    "we moved to Acme torque wrenches in May",
    "I've moved to Acme torque wrenches",
])
def test_a_home_is_a_place_name_not_a_thing(text):
    assert not [t for t in triples(text) if t[1] in {"lives_in", "lived_in"}]


@pytest.mark.parametrize("text, expected", [
    ("purchase orders live in Coupa", ("Orbit", "purchase_order_tool", "Coupa", None)),
    ("purchase orders lived in Coupa until March", ("Orbit", "purchase_order_tool", "Coupa", None)),
    ("expense claims go through Expensify", ("Orbit", "expense_claim_tool", "Expensify", None)),
    ("expense claims have gone through Expensify since May", ("Orbit", "expense_claim_tool", "Expensify", None)),
    ("weather forecasts come from Meteomatics", ("Orbit", "weather_forecast_tool", "Meteomatics", None)),
    ("weather forecasts came from Meteomatics", ("Orbit", "weather_forecast_tool", "Meteomatics", None)),
    ("floor plans are drawn in Figma", ("Orbit", "floor_plan_tool", "Figma", None)),
])
def test_a_thing_in_common_nouns_takes_the_tool_it_lives_in(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text, expected", [
    ("Mei lives in Sheffield", [("Mei", "lives_in", "Sheffield", None)]),
    ("the kids live in Leeds now", []),
    ("my parents live in Leeds", []),
])
def test_people_who_live_somewhere_have_no_tool(text, expected):
    assert [t for t in triples(text) if t[1] != "lives_in" or t[0] == "Mei"] == expected


@pytest.mark.parametrize("text, expected", [
    ("the office is next to the station", "next to the station"),
    ("the office was next to the station", "next to the station"),
    ("the office has been opposite the station since May", "opposite the station"),
])
def test_a_relative_place_is_said_whole(text, expected):
    assert triples(text) == [("Orbit", "office", expected, None)]


@pytest.mark.parametrize("text, expected", [
    ("The new build is running smoothly", []),
    ("BattlEye was running smoothly on every platform", []),
    ("Olu is running the store service", [("Olu", "leads", "store service", None)]),
])
def test_a_state_in_the_progressive_is_no_lead(text, expected):
    assert triples(text) == expected
