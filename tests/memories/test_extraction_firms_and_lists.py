"""Four sentence shapes of team statements (stop 45, issue 24 point 2), each in several tenses and persons:
a firm named as the subject of what it does for the team ("Bramble Hill Farm collects our spent grain"); a list of
tools by function ("We use Jira for tickets, Confluence for the wiki and Slack for chat"); one of the team switching
all of it ("Fiona's moved us to Cairnview Pet Cremation"); a day without its year opening the statement ("From 1
July our clinical waste contractor is PHS"). And "Maria handles payroll": an owner."""

from datetime import UTC, datetime

import pytest

from tests.memories.reading import read


@pytest.mark.parametrize("text, fact", [
    ("Bramble Hill Farm collects our spent grain now", ("Orbit", "spent_grain_tool", "Bramble Hill Farm")),
    ("Bramble Hill Farm has collected our spent grain since 2024", ("Orbit", "spent_grain_tool", "Bramble Hill Farm")),
    ("Hagen & Co do our accounts", ("Orbit", "account_tool", "Hagen & Co")),
    ("Hagen & Co have done our accounts since 2019.", ("Orbit", "account_tool", "Hagen & Co")),
    ("PHS take away the sharps bins every Thursday.", ("Orbit", "sharp_bin_tool", "PHS")),
    ("Riverside Dairy is now supplying the milk for the café", ("Orbit", "milk_tool", "Riverside Dairy")),
    ("Acme Print printed our flyers", ("Orbit", "flyer_tool", "Acme Print")),
])
def test_a_firm_as_the_subject_of_what_it_does_for_the_team_is_the_team_s_supplier(text, fact):
    assert fact in read(text)


@pytest.mark.parametrize("text", [
    "Maria Lopez does our payroll",  # a person's name: no firm
    "Tom Hill collects the post",
    "maya does our accounts",  # the speaker
    "Hagen does our taxes",  # one word that could be a person's
    "Bramble Hill Farm collects a lot of rain",  # no thing of the team's
])
def test_a_person_or_no_thing_of_the_team_s_gives_no_supplier(text):
    assert [f for f in read(text, people=("tom",)) if f[1].endswith("_tool")] == []


def test_a_firm_hosting_a_team_event_is_where_it_is():
    assert ("Orbit", "summer_party_place", "Hall Farm") in read("Hall Farm hosts our summer party")


@pytest.mark.parametrize("text, facts", [
    ("We use Jira for tickets, Confluence for the wiki and Slack for chat.",
     [("Orbit", "ticket_tool", "Jira"), ("Orbit", "wiki_tool", "Confluence"), ("Orbit", "chat_tool", "Slack")]),
    ("we're using Xero for accounts and Gusto for payroll", [("Orbit", "account_tool", "Xero"), ("Orbit", "payroll_tool", "Gusto")]),
    ("The team uses Shopify for the webshop, and Square for the tills",
     [("Orbit", "webshop_tool", "Shopify"), ("Orbit", "pos_tool", "Square")]),
])
def test_every_tool_of_a_list_by_function_is_read(text, facts):
    said = read(text)
    assert all(fact in said for fact in facts), said


@pytest.mark.parametrize("text, only", [
    ("We use Slack for chat and it works fine.", [("Orbit", "chat_tool", "Slack")]),
    ("we use Trello for the rota and WhatsApp for everything else", [("Orbit", "rota_tool", "Trello")]),
    ("We use Xero for accounts and payroll.", [("Orbit", "account_tool", "Xero")]),
])
def test_a_list_ends_where_its_items_stop_being_a_tool_for_a_function(text, only):
    assert [f for f in read(text) if f[1].endswith("_tool")] == only


@pytest.mark.parametrize("text, fact", [
    ("Tom has switched everyone to Slack for chat", ("Orbit", "chat_tool", "Slack", None)),
    ("Tom moved us from Trello to Asana for tasks", ("Orbit", "task_tool", "Asana", "Trello")),
    ("Tom's moved us over to Monzo for banking", ("Orbit", "banking_tool", "Monzo", None)),
])
def test_one_of_the_team_switching_all_of_it_is_the_team_s_switch(text, fact):
    assert fact in read(text, people=("tom",), previous=True)


def test_one_of_the_team_moving_house_is_no_switch():
    assert ("Tom", "lives_in", "Leeds") in read("Tom moved to Leeds.", people=("tom",))
    assert [f for f in read("Tom moved to Leeds.", people=("tom",)) if f[0] == "Orbit"] == []


@pytest.mark.parametrize("text, day", [
    ("From 1 July our clinical waste contractor is PHS.", datetime(2026, 7, 1, tzinfo=UTC)),
    ("From July 1st, we use PHS for clinical waste", datetime(2026, 7, 1, tzinfo=UTC)),
    ("as of 3 June our bank is Starling", datetime(2026, 6, 3, tzinfo=UTC)),
    ("Since 2 March we've used Gusto for payroll", datetime(2026, 3, 2, tzinfo=UTC)),
    ("As of next week our bank is Starling", datetime(2026, 6, 22, tzinfo=UTC)),
])
def test_a_day_without_its_year_opening_a_statement_is_when_its_fact_begins(text, day):
    from memories.extraction.offline import extract

    facts = [f for f in extract(text=text, speaker="maya", occurred_at=datetime(2026, 6, 15, 12, tzinfo=UTC), team="Orbit").facts
             if f.attribute.endswith("_tool")]
    assert len(facts) == 1 and facts[0].valid_from == day, facts


@pytest.mark.parametrize("text, fact", [
    ("Maria handles payroll.", ("Maria", "owns", "payroll")),
    ("Tom is handling the Hendry account now", ("Tom", "owns", "Hendry account")),
    ("I handle the rota", ("maya", "owns", "rota")),
    ("Tom has been handling supplier invoices", ("Tom", "owns", "supplier invoices")),
])
def test_who_handles_a_thing_owns_it(text, fact):
    assert fact in read(text, people=("tom", "maria"))


@pytest.mark.parametrize("text, fact", [
    ("Van bookings go through me.", ("maya", "owns", "van bookings")),
    ("From now on van bookings go through Dev", ("Dev", "owns", "van bookings")),
    ("all expenses go through maria", ("Maria", "owns", "expenses")),
    ("Refunds are handled by Maria now", ("Maria", "owns", "refunds")),
])
def test_a_thing_that_goes_through_one_of_the_team_is_theirs(text, fact):
    assert fact in read(text, people=("dev", "maria"))


def test_a_tool_a_thing_goes_through_stays_a_tool():
    assert ("Orbit", "on_call_tool", "Opsgenie") in read("Paging goes through Opsgenie", people=("dev",))
    assert read("The kids go to Maria on Fridays", people=("maria",)) == []


@pytest.mark.parametrize("text, fact", [
    ("lena becomes senior curator from April, and priya will report to lena", ("Priya", "reports_to", "Lena")),
    ("Maria joined in May and Tom leads the shop now", ("Tom", "leads", "shop")),
    ("I moved to Leeds and Tom owns the rota now", ("Tom", "owns", "rota")),
])
def test_one_person_s_line_after_and_is_a_clause_of_its_own(text, fact):
    assert fact in read(text, people=("priya", "lena", "tom", "maria"))


@pytest.mark.parametrize("text, fact", [
    ("I moved out of Redland to Keynsham", ("maya", "lives_in", "Keynsham", "Redland")),
    ("moved out of Redland to Keynsham last week", ("maya", "lives_in", "Keynsham", "Redland")),
    ("I just moved house from Leeds to York", ("maya", "lives_in", "York", "Leeds")),
    ("We've moved house from Leeds to York", ("maya", "lives_in", "York", "Leeds")),
])
def test_a_move_out_of_one_town_to_another_or_of_house_is_where_one_lives(text, fact):
    assert fact in read(text, previous=True)


@pytest.mark.parametrize("text, fact", [
    ("finally got the pottery wheel working in the shed at our place in Mytholmroyd", ("maya", "lives_in", "Mytholmroyd")),
    ("our place in Mytholmroyd is lovely", ("maya", "lives_in", "Mytholmroyd")),
    ("my flat in Leith is tiny", ("maya", "lives_in", "Leith")),
])
def test_the_speaker_s_home_named_by_where_it_is_is_where_they_live(text, fact):
    said = read(text)
    assert fact in said and [f for f in said if f[0] == "Orbit"] == [], said


@pytest.mark.parametrize("text", ["my old place in Leeds had mice", "if I sold my flat in Leith I'd be rich"])
def test_an_old_or_imagined_home_is_not_where_one_lives(text):
    assert [f for f in read(text) if f[1] == "lives_in"] == []


@pytest.mark.parametrize("text, fact", [
    ("Moved house at the weekend: Bridge of Don to Portlethen. Shorter commute, more hills.", ("maya", "lives_in", "Portlethen", "Bridge of Don")),
    ("Moved house in March: from Leeds to York", ("maya", "lives_in", "York", "Leeds")),
])
def test_a_label_that_says_the_speaker_moved_before_two_towns_is_the_move(text, fact):
    assert fact in read(text, previous=True)


def test_a_label_that_moved_a_thing_is_no_move_of_house():
    assert [f for f in read("Moved the standup: Monday to Tuesday", previous=True) if f[1] == "lives_in"] == []
