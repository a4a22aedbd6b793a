"""A switch said in chat's own shape (issue 24, point 2; `offline.switches`): one name said gone beside one said
current, whatever the verbs, in lowercase chat: "bye dropbox, everything's on google drive now". Each
shape in several forms, in sentences of our own; each gave no fact before this change. Then what must give
none (descriptions, people, times, two switches in one breath), and a switch stored through `remember`
ending the old tool's fact."""

from datetime import UTC, datetime
from functools import partial

import pytest

from memories.extraction.offline import extract
from memories.models import Fact, FactStatus
from tests.memories.reading import read, said_in_team

switches = partial(read, previous=True, people=["tomasz", "bea"])


@pytest.mark.parametrize("text", [
    "bye bye dropbox, everything's on google drive now",
    "dropbox is dead, long live google drive",
    "we're on google drive now, dropbox is cancelled",
    "google drive is live! dropbox goes read-only on friday",
    "no more dropbox 🎉 google drive from now on",
    "got rid of dropbox, it's google drive now",
    "dropbox has been switched off. google drive going forward",
])
def test_a_name_said_gone_beside_one_said_current_is_a_replacement(text):
    assert switches(text) == [("Orbit", "replaced_value", "Google Drive", "Dropbox")]


@pytest.mark.parametrize("text, attribute", [
    ("payroll's moving off sage onto brightpay from april", "payroll_tool"),
    ("the newsletter goes out on brightpay from now on, sage is gone", "newsletter_tool"),
    ("ditched sage — brightpay does all our payslips now", "payslip_tool"),
    ("we've dropped sage. brightpay for payroll going forward", "payroll_tool"),
    ("switched payroll provider from sage to brightpay last month", "payroll_tool"),
])
def test_the_function_is_read_where_the_statement_says_it(text, attribute):
    assert switches(text) == [("Orbit", attribute, "Brightpay", "Sage")]


@pytest.mark.parametrize("text", [
    "switched to onfleet for route planning, way quicker",
    "we've switched to onfleet for route planning",
    "switching to onfleet for route planning from monday",
])
def test_a_current_name_alone_needs_a_function_and_a_switch_said(text):
    assert switches(text) == [("Orbit", "route_planning_tool", "Onfleet", None)]


def test_a_switch_under_way_with_its_day_ahead_begins_on_that_day():
    # (until stop 47 a plan that gave nothing until its day had come; the store now keeps a tool's day ahead)
    text = "paging is moving from pagerduty to opsgenie on 1 july"
    ahead = extract(text=text, speaker="maya", occurred_at=datetime(2026, 6, 15, tzinfo=UTC), team="Orbit").facts
    assert [(f.attribute, f.value, f.previous_value, f.valid_from) for f in ahead] == \
        [("on_call_tool", "Opsgenie", "Pagerduty", datetime(2026, 7, 1, tzinfo=UTC))]
    assert switches("paging is moving from pagerduty to opsgenie next week") == []  # ahead, with no day said: a plan
    facts = extract(text=text, speaker="maya", occurred_at=datetime(2026, 7, 2, tzinfo=UTC), team="Orbit").facts
    assert [(f.attribute, f.value, f.previous_value, f.valid_from) for f in facts] == \
        [("on_call_tool", "Opsgenie", "Pagerduty", datetime(2026, 7, 1, tzinfo=UTC))]


def test_english_words_are_names_where_a_function_says_what_they_are():
    assert switches("ditched lightning labels, inland label does all our can labels now") == \
        [("Orbit", "can_label_tool", "Inland Label", "Lightning Labels")]


def test_a_gone_name_in_chat_completes_a_switch_the_clause_rules_read():
    assert switches("zoom is cancelled, we use jitsi for calls from now on") == [("Orbit", "call_tool", "Jitsi", "Zoom")]


@pytest.mark.parametrize("text", [
    "no more meetings on fridays, we're going with async updates",  # no name, no function
    "ditched the car, cycling to work now",
    "we dropped the ball on that one, sorry",
    "bye everyone, see you monday",
    "lockers have moved to the old boiler room, the hallway ones are gone",  # described things
    "farmers market stall is saturdays at harmon square from now on, the old spot is gone",  # a place
    "handing the rota over to bea from december, tomasz is done with it",  # people
    "the taproom goes dark on mondays instead of tuesdays from now on",  # times
    "email's moving off godaddy onto fastmail and we're dropping zoom too, whereby from now on",  # two switches at once
    "toast is live at the bar. if you open the square app i will know",  # a name alone, no function
])
def test_what_is_no_single_switch_gives_no_replacement(text):
    assert not [f for f in switches(text) if f[1] == "replaced_value" or f[1].endswith("_tool")]


def test_a_personal_chat_reads_no_switch():
    assert read("bye bye dropbox, everything's on google drive now", team=None) == []


@pytest.mark.django_db
def test_a_switch_in_chat_ends_the_old_tools_fact(cast, django_capture_on_commit_callbacks):
    said_in_team(cast, django_capture_on_commit_callbacks, [("We use Dropbox for file sharing.", datetime(2025, 3, 3, tzinfo=UTC)),
                                                            ("bye bye dropbox, everything's on google drive now", datetime(2025, 3, 20, tzinfo=UTC))])
    held = Fact.objects.in_scope(cast.scope_a).filter(attribute__endswith="_tool").order_by("id")
    assert [(f.attribute, f.value, f.status) for f in held] == [
        ("file_sharing_tool", "Dropbox", FactStatus.SUPERSEDED), ("file_sharing_tool", "Google Drive", FactStatus.ACTIVE)]
