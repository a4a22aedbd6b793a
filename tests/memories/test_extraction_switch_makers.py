"""Switches and tools said in the shapes a team's chat uses beyond "we moved X from A to B" (issue 24,
point 2, stop 37): a switch made for the team by who runs its tools ("the uni switched us …", "IT has
moved everyone …") or said without a subject ("Moved the flux scripts …"); a team's thing switched by
one of its people; a thing in common nouns that opens the sentence ("Field data goes to Nextcloud");
"all calls are on Teams now"; a label's function carried through its message and said as possession or
company ("drone news: … we've got a DJI Mavic 3 now"); the old tool said closed beside the new one;
a decision that says the switch. Each case failed before this change, and the negative cases hold."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline import extract
from memories.extraction.vocabulary import REPLACEMENT_ATTRIBUTE, canonical_attribute

SAID = datetime(2025, 6, 16, 12, tzinfo=UTC)
TEAM = "Peat Lab"
PEOPLE = ["ines", "felix", "kwame", "priya"]


def facts(text: str, *, speaker: str = "ines", team: str | None = TEAM):
    return [(f.subject, canonical_attribute(f.attribute), f.value, f.previous_value)
            for f in extract(text=text, speaker=speaker, occurred_at=SAID, team=team, people=PEOPLE).facts]


def triples(text: str, **kwargs):
    return [f[:3] for f in facts(text, **kwargs)]


@pytest.mark.parametrize("text", [
    "The uni switched us from Zoom to Teams.",
    "IT has switched us from Zoom to Teams.",
    "The university has moved everyone from Zoom to Teams.",
    "Head office finally migrated the team from Zoom to Teams.",
])
def test_a_switch_made_for_the_team_by_who_runs_its_tools_is_the_team_s(text):
    [(subject, _, value, previous)] = facts(text)
    assert (subject, value, previous) == (TEAM, "Teams", "Zoom")


@pytest.mark.parametrize("text", [
    "Moved the flux scripts from Bitbucket to the uni GitLab.",
    "Migrated the flux scripts from Bitbucket to GitLab.",
    "I moved the flux scripts from Bitbucket to GitLab.",
    "I've migrated our flux scripts from Bitbucket to GitLab.",
])
def test_a_team_s_thing_switched_by_one_of_its_people_or_without_a_subject_is_the_team_s(text):
    assert facts(text) == [(TEAM, "flux_script_tool", "GitLab", "Bitbucket")]


@pytest.mark.parametrize("text", [
    "I switched my phone from Android to iPhone.",  # the speaker's own thing stays theirs
    "The company moved to Lisbon.",  # an institution's move names nothing switched for the team
    "It moved from Lisbon to Porto.",  # "it" is no IT department
])
def test_what_is_no_switch_for_the_team(text):
    assert [f for f in triples(text) if f[0] == TEAM and f[1].endswith("_tool")] == []


def test_a_pet_called_by_name_is_no_tool_described():
    assert triples("I adopted a cat called Biscuit.") == [("ines", "has_pet", "Biscuit")]  # the CI run of f401373 read "uses Biscuit"


@pytest.mark.parametrize("text", ["We moved the offsite from Lisbon to Porto.", "Moved the offsite from Lisbon to Porto."])
def test_a_team_event_switched_between_places_is_its_place_not_a_tool(text):
    assert facts(text) == [(TEAM, "offsite_place", "Porto", "Lisbon")]


@pytest.mark.parametrize("text, expected", [
    ("Field data goes to Nextcloud from today.", (TEAM, "field_data_tool", "Nextcloud")),
    ("Timesheets go in Kronos.", (TEAM, "timesheet_tool", "Kronos")),
    ("Work orders live in Maximo.", (TEAM, "work_order_tool", "Maximo")),
    ("Field check-ins are on Signal now.", (TEAM, "field_check_ins_tool", "Signal")),
    ("From this term the uni has retired its Zoom licences, so all calls are on Microsoft Teams now.", (TEAM, "call_tool", "Microsoft Teams")),
])
def test_a_thing_in_common_nouns_opening_the_sentence_is_served_by_its_tool(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text", [
    "Mei lives in Sheffield.",  # a name opens the sentence: a home
    "Half the office went to Lisbon.",  # a known place is no tool
    "Priya is on Slack now.",  # one of the scope's people
    "Sales calls are on Friday.",  # a day
    "stonehaven will be on Provet same as us.",  # one lowercase word that is no plural: maybe a name
])
def test_what_opens_a_sentence_and_is_no_thing_served_by_a_tool(text):
    assert [f for f in triples(text) if f[0] == TEAM and f[1].endswith("_tool")] == []


@pytest.mark.parametrize("text, expected", [
    ("drone news: the Phantom's retired. we've got a DJI Mavic 3 Multispectral now, way better for mapping",
     (TEAM, "drone_tool", "DJI Mavic 3 Multispectral")),
    ("Vehicle hire: we're with Enterprise from now on.", (TEAM, "vehicle_hire_tool", "Enterprise")),
    ("Poster printing: we're using Doxdirect now.", (TEAM, "poster_printing_tool", "Doxdirect")),
])
def test_a_label_s_function_holds_through_its_message_and_possession(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text", ["Personal news: we've got a new puppy!", "Weekend: we're with Priya at the pub."])
def test_possession_under_no_function_is_no_tool(text):
    assert [f for f in triples(text) if f[1].endswith("_tool")] == []


@pytest.mark.parametrize("text, expected", [
    ("Poster printing: Reprographics closed after the move, so we're using Doxdirect now.",
     (TEAM, "poster_printing_tool", "Doxdirect", "Reprographics")),
    ("vehicle hire: Arnold Clark Sighthill is closing, so we're with Enterprise at Straiton from now on.",
     (TEAM, "vehicle_hire_tool", "Enterprise", "Arnold Clark Sighthill")),
    ("Nextcloud is live. Field data goes to Nextcloud from today, Dropbox goes read-only in January.",
     (TEAM, "field_data_tool", "Nextcloud", "Dropbox")),
    ("Enthuse is live! JustGiving page closed and redirects are in", (TEAM, REPLACEMENT_ATTRIBUTE, "Enthuse", "JustGiving")),
])
def test_the_old_tool_said_closed_or_gone_beside_the_new_one_is_what_it_replaced(text, expected):
    assert facts(text) == [expected]


def test_two_tools_said_gone_name_no_old_one():
    text = "From 13 January Dropbox is retired and all our docs move to SharePoint. Zoom's going too, calls will be on Teams."
    assert [f[3] for f in facts(text) if f[1] == "call_tool"] == [None]


def test_a_decision_that_says_a_switch_gives_the_tool_too():
    assert triples("Decision: task tracking has moved to Planner (in the BRC Team). Trello is archived.") == [
        (TEAM, "decision", "task tracking has moved to Planner"), (TEAM, "task_tool", "Planner")]
    assert triples("Decision: the offsite is in Porto.") == [(TEAM, "decision", "the offsite is in Porto"), (TEAM, "offsite_place", "Porto")]


# The second batch of stop 37, read off heldout-q's failures (a development set since it judged the first).
@pytest.mark.parametrize("text, expected", [
    ("We switched to 1Password.", (TEAM, "uses", "1Password", None)),
    ("IT has switched us to 1Password after the LastPass breach.", (TEAM, "uses", "1Password", None)),
    ("The company has switched us to Teams. Slack gets turned off Friday.", (TEAM, REPLACEMENT_ATTRIBUTE, "Teams", "Slack")),
    ("Version control news: we've switched to Plastic SCM.", (TEAM, "code_tool", "Plastic SCM", None)),  # version control is code
    ("We've got Buffer now for scheduling posts, Hootsuite's cancelled.", (TEAM, "scheduling_post_tool", "Buffer", "Hootsuite")),
    ("Pelcro is gone, it's all Piano now for subscriptions.", (TEAM, "subscription_tool", "Piano", "Pelcro")),
    ("Jenkins box switched off. Every build is on GitHub Actions now.", (TEAM, "build_tool", "GitHub Actions", "Jenkins")),
    ("Trint replaced Otter for everyone from today.", (TEAM, REPLACEMENT_ATTRIBUTE, "Trint", "Otter")),
    ("Ditched Premiere for DaVinci Resolve on the video side.", (TEAM, REPLACEMENT_ATTRIBUTE, "DaVinci Resolve", "Premiere")),
    ("Live blogs are on Tickaroo from now, the ScribbleLive contract ended.", (TEAM, "live_blog_tool", "Tickaroo", "ScribbleLive")),
    ("Felix, all our shifts live in Connecteam, invite's coming.", (TEAM, "shift_tool", "Connecteam", None)),
    ("Print pages are still built in InDesign.", (TEAM, "print_page_tool", "InDesign", None)),  # pages, not paging
    ("Moving our charts from Flourish to Datawrapper this month, cheaper.", (TEAM, "chart_tool", "Datawrapper", "Flourish")),
    ("moving our shared passwords to Bitwarden this week, LastPass gets cancelled end of Feb", (TEAM, "shared_password_tool", "Bitwarden", "LastPass")),
    ("we moved the runbooks out of Confluence into SharePoint, the old space is read-only now", (TEAM, "runbook_tool", "SharePoint", "Confluence")),
    ("We've moved the studio into a bigger space in Griffintown.", (TEAM, "studio_place", "Griffintown", None)),
    ("As of Monday we're on Beehiiv for the morning newsletter.", (TEAM, "morning_newsletter_tool", "Beehiiv", None)),
    # a function opening the sentence is no one moving house, but the team's switch (`offline.switches`, stop 41)
    ("Email's moving from Gmail to Outlook too.", (TEAM, "email_tool", "Outlook", "Gmail")),
])
def test_switches_and_tools_said_in_chat_s_other_shapes(text, expected):
    assert facts(text) == [expected]


@pytest.mark.parametrize("text", [
    "We switched to Lisbon.",  # a known place is no tool
    "The site is down.",  # a state, no value
])
def test_what_those_shapes_do_not_read_as_a_tool_or_a_home(text):
    assert [f for f in triples(text) if f[1] in ("uses", "lives_in") or f[1].endswith("_tool")] == []


def test_a_weekday_a_switch_starts_from_is_the_nearest_and_since_one_the_last():
    monday = datetime(2025, 6, 16, 12, tzinfo=UTC)  # SAID is a Monday
    [fact] = extract(text="As of Monday we're on Beehiiv for the newsletter.", speaker="ines", occurred_at=monday, team=TEAM, people=PEOPLE).facts
    assert fact.valid_from.date() == monday.date()
    saturday = datetime(2025, 6, 14, 12, tzinfo=UTC)
    [fact] = extract(text="From Monday the standup is at 9:30.", speaker="ines", occurred_at=saturday, team=TEAM, people=PEOPLE).facts
    assert fact.valid_from.date() == datetime(2025, 6, 16).date()  # two days ahead, not five days back
    [fact] = extract(text="We've been on Slack since Monday.", speaker="ines", occurred_at=saturday, team=TEAM, people=PEOPLE).facts
    assert fact.valid_from.date() == datetime(2025, 6, 9).date()  # since: the last Monday
