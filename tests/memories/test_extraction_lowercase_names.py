"""Names in chat typed all in lowercase (issue 24, point 2): every rule reads a tool, a vendor or a
person by its capital, and team chat drops the capitals. Two changes read it: a word no English
vocabulary holds is a name (`offline.truecase`: "klaviyo", "mailchimp", "abena"), and a switch's value
said in lowercase chat is a name whatever word it is (`values.said_as_name`: "we switched to circuit
for route planning"). Each shape in several tenses and persons, in sentences of our own; each gave
no fact before this change."""

from functools import partial

import pytest

from memories.extraction.offline.truecase import english, unknown_words_capitalised
from tests.memories.reading import read

switches = partial(read, previous=True)


@pytest.mark.parametrize("word", ["kegs", "ditched", "invoices", "shipped", "happily", "tomorrow", "pls", "btw", "repo",
                                  "whiteboard", "spreadsheet", "offsite", "standup", "wifi", "emailed"])
def test_english_words_and_chat_words_are_no_names(word):
    assert english(word)


@pytest.mark.parametrize("word", ["klaviyo", "mailchimp", "hiscox", "expensify", "dialpad", "zendesk", "abena", "tobiasz"])
def test_words_no_vocabulary_holds_are_names(word):
    assert not english(word)


def test_only_the_unknown_words_of_a_sentence_get_a_capital():
    said = "we've gone over to klaviyo for the newsletter, mailchimp's list is closed @zendesk zendesk.com"
    assert unknown_words_capitalised(said) == \
        "we've gone over to Klaviyo for the newsletter, Mailchimp's list is closed @zendesk zendesk.com"


@pytest.mark.parametrize("text", [
    "we've gone over to klaviyo for the newsletter",
    "we have moved over to klaviyo for the newsletter",
    "we went over to klaviyo for the newsletter last month",
    "we moved over to klaviyo for the newsletter in may",
])
def test_a_switch_to_a_tool_said_in_lowercase_in_any_tense(text):
    assert switches(text) == [("Orbit", "newsletter_tool", "Klaviyo", None)]


@pytest.mark.parametrize("text", [
    "we switched from mailchimp to klaviyo for the newsletter",
    "we're switching from mailchimp to klaviyo for the newsletter",
    "we've migrated from mailchimp to klaviyo for the newsletter",
])
def test_a_switch_from_one_tool_to_another_in_lowercase(text):
    assert switches(text) == [("Orbit", "newsletter_tool", "Klaviyo", "Mailchimp")]


@pytest.mark.parametrize("text, tool", [
    ("we switched to circuit for route planning", "circuit"),  # an English word, yet a switch's value
    ("we have switched to onfleet for route planning", "Onfleet"),
])
def test_a_switch_value_in_lowercase_chat_is_a_name_whatever_word_it_is(text, tool):
    assert read(text) == [("Orbit", "route_planning_tool", tool)]


def test_a_wiki_on_a_platform_said_in_lowercase():
    assert read("the wiki is on confluence now") == [("Orbit", "wiki_tool", "confluence")]


@pytest.mark.parametrize("text", ["my partner abena made jollof for the team", "my partner is abena"])
def test_a_person_named_in_lowercase(text):
    assert read(text) == [("maya", "partner", "Abena")]


@pytest.mark.parametrize("text", [
    "i'm on boxing day this year",  # a shift, not a tool
    "we're on track for friday",
    "kegs are stacked by the forklift",
    "the brightpay run is on the 25th this month",
])
def test_lowercase_chat_that_names_no_tool_gives_none(text):
    assert [f for f in read(text) if f[1].endswith("_tool") or f[1] == "uses"] == []


def test_capitalised_text_is_read_as_it_was():
    """A sentence with a capital anywhere is no lowercase chat: its lowercase words stay words."""
    assert read("We switched to circuit for route planning") == []
