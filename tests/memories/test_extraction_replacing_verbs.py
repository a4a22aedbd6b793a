"""A switch said by a replacing verb, or by a move out of one name into another (issue 24, point 2;
`offline.switches`): "zendesk is being replaced by freshdesk", "we're replacing trello with linear", "linear has
replaced trello", "the wiki moved out of confluence into notion", "goodbye hubspot, hello pipedrive", "zendesk →
freshdesk", "the contract with otis has ended, kone now service both lifts". Sentences of our own, in several voices
and tenses; most gave no fact, or no previous value, before this change (the clause rules read a few of the passive
ones already). Then what must give none: described things, people, the speaker's own things, a switch looked at."""

from datetime import UTC, datetime
from functools import partial

import pytest

from memories.models import Fact, FactStatus
from tests.memories.reading import read, said_in_team

switches = partial(read, previous=True, people=["tomasz", "bea"])


def _switch(text: str) -> tuple[str, str] | None:
    """The (new, old) of the statement's one switch fact, whatever attribute it is on."""
    found = [(f[2], f[3]) for f in switches(text) if f[1] == "replaced_value" or f[1].endswith("_tool")]
    return found[0] if len(found) == 1 else None


@pytest.mark.parametrize("text", [
    # the old one first, in the passive voice
    "Zendesk is being replaced by Freshdesk, the agents start on it next week",
    "zendesk got swapped out for freshdesk over the summer",
    "Zendesk was replaced by Freshdesk in May",
    "the Zendesk helpdesk has been replaced with Freshdesk",
    # the doer's voice, the old one first
    "we're replacing Zendesk with Freshdesk, logins went out this morning",
    "swapped zendesk out for freshdesk last month",
    "We replaced Zendesk with Freshdesk in the spring.",
    # the new one first
    "Freshdesk has replaced Zendesk as of today",
    "freshdesk replaced zendesk in may, nobody misses it",
])
def test_a_replacing_verb_names_the_new_one_and_the_old(text):
    assert _switch(text) == ("Freshdesk", "Zendesk")


@pytest.mark.parametrize("text, attribute", [
    ("the wiki moved out of Confluence into Notion last week", "wiki_tool"),
    ("Jenkins is on its way out, we're moving the build pipelines to GitHub Actions", "build_pipeline_tool"),
    ("Expense claims moved to Spendesk on 1 June, Concur closes the same day", "expense_claim_tool"),
])
def test_a_move_into_a_name_beside_one_said_gone_keeps_its_function(text, attribute):
    facts = [f for f in switches(text) if f[1] == attribute]
    assert len(facts) == 1 and facts[0][3] is not None, switches(text)


@pytest.mark.parametrize("text", [
    "goodbye hubspot, hello pipedrive 👋",
    "Hubspot is closed, everything's logged in Pipedrive now",
])
def test_a_name_greeted_or_logged_into_beside_one_said_gone(text):
    assert _switch(text) == ("Pipedrive", "Hubspot")


def test_a_pronoun_that_replaced_a_name_gives_the_current_tool_its_previous_value():
    facts = switches("Support tickets are handled in Freshdesk now. It replaced Zendesk in May.")
    assert [f[2:] for f in facts if f[1].endswith("_tool") or f[1] == "replaced_value"] == [("Freshdesk", "Zendesk")]


@pytest.mark.parametrize("text, new, old", [
    ("Zendesk → Freshdesk migration happens this weekend, Zendesk goes read-only on friday", "Freshdesk", "Zendesk"),
    ("zendesk -> freshdesk for the support inbox by the end of the month", "Freshdesk", "Zendesk"),
    ("Window cleaning: the contract with Crystal Clear has ended, Sparklers clean the windows from today", "Sparklers", "Crystal Clear"),
    ("Lift servicing: Kone now service both lifts. The old contract with Otis has ended.", "Kone", "Otis"),
    ("the old Nagios box is being decommissioned. The servers are now monitored by Checkmk", "Checkmk", "Nagios"),
    ("Mailchimp is gone, the newsletter goes out through Brevo now", "Brevo", "Mailchimp"),
    ("Harvest is gone: timesheets are in Clockify from today", "Clockify", "Harvest"),
    ("all the Tinytag loggers retired, the stores now log to the Hanwell units", "Hanwell", "Tinytag"),
    ("Trello is dead, long live Asana. (We did trial Monday.com too, nobody liked it.)", "Asana", "Trello"),
    ("bookings are moving over to zenbooker! live 1 march. simplybook stays read-only till june", "Zenbooker", "Simplybook"),
])
def test_more_shapes_of_a_switch_with_both_ends(text, new, old):
    assert _switch(text) == (new, old)


def test_a_move_over_to_a_name_says_no_function_of_its_own():
    facts = switches("bookings are moving over to zenbooker! live 1 march. simplybook stays read-only till june")
    assert [f[1] for f in facts] == ["booking_tool"]


def test_a_new_supplier_named_with_its_function_is_that_functions_tool():
    assert switches("new timber supplier is Jewson, the old one's prices went silly") == \
        [("Orbit", "timber_supplier_tool", "Jewson", None)]


@pytest.mark.parametrize("text", [
    "the boiler is being replaced by a new one next week",  # described things
    "Felix's new manager is Oskar",  # a person's role
    "new van is ordered, she'll be called bluebell",  # a new thing's state, not its name
    "We looked at Zendesk → Freshdesk but the price is silly",  # looked at, not done
    "tomasz is being replaced by bea on the saturday rota",  # people
    "I replaced my phone with a new one",  # the speaker's own thing
    "we're moving the standup into the big room",  # a described place
    "swapped the tuesday meeting for a friday one",  # times
])
def test_what_replaces_no_tool_gives_no_switch(text):
    assert _switch(text) is None


@pytest.mark.django_db
def test_a_replacement_by_its_verb_ends_the_old_tools_fact(cast, django_capture_on_commit_callbacks):
    said_in_team(cast, django_capture_on_commit_callbacks, [
        ("We use Zendesk for support tickets.", datetime(2025, 3, 3, tzinfo=UTC)),
        ("Freshdesk has replaced Zendesk as of today", datetime(2025, 9, 1, tzinfo=UTC)),
    ])
    held = Fact.objects.in_scope(cast.scope_a).filter(attribute__endswith="_tool").order_by("id")
    assert [(f.attribute, f.value, f.status) for f in held] == [
        ("support_ticket_tool", "Zendesk", FactStatus.SUPERSEDED), ("support_ticket_tool", "Freshdesk", FactStatus.ACTIVE)]
