"""The offline extractor reads a team's statements in the shapes chat uses (issue 24, point 2, the
sixth pass): a thing said without "the" or "our" ("paging goes through Opsgenie"), a function routed
through a tool ("come in through", "go via"), a new tool said without the old one ("logs have moved
to Datadog"), a switch in the present ("the offsite moves from A to B"), roles announced for the
future or said in the progressive ("Nadia will lead …", "Olu is running …"), a manager said from the
report ("Felix's manager is Oskar"), the tool said first ("Statsig is our experimentation platform"),
an aside in brackets, and an event moved to a recurring day. Each shape in several tenses and
persons, in sentences of our own; each failed before this change."""

from functools import partial

import pytest

from memories.extraction.vocabulary import function_key
from tests.memories.reading import read

triples = partial(read, negated=True)


switches = partial(read, negated=True, previous=True)


@pytest.mark.parametrize("text", [
    "paging goes through Opsgenie",
    "Paging goes through Opsgenie for now.",
    "paging went through Opsgenie",
    "paging has gone through Opsgenie since March",
    "paging is on Opsgenie",
    "alerts come in through Opsgenie",
    "alerts came in via Opsgenie",
])
def test_a_function_said_bare_takes_its_tool_in_any_tense(text):
    assert triples(text) == [("Orbit", "on_call_tool", "Opsgenie")]


@pytest.mark.parametrize("text, expected", [
    ("crash reports from the clients come in through Sentry", ("Orbit", "crash_report_tool", "Sentry")),
    ("player dashboards are all in Looker", ("Orbit", "player_dashboard_tool", "Looker")),
    ("Our public status page is on Statuspage.", ("Orbit", "public_status_page_tool", "Statuspage")),  # "status" is no plural
])
def test_what_qualifies_a_function_does_not_hide_it(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text, expected", [
    ("offsite 2024 will be in Kraków", ("Orbit", "offsite_2024_place", "Kraków")),
    ("Season 5 launch date is 19 September 2026", ("Orbit", "season_5_launch_date", "19 September 2026")),
    ("Season 16 moved to 1 December 2026", ("Orbit", "season_16_date", "1 December 2026")),
    ("Switch launch slipped to 10 February 2027", ("Orbit", "switch_launch_date", "10 February 2027")),
    ("Dundee Christmas party is booked at the Malmaison", ("Orbit", "dundee_christmas_party_place", "Malmaison")),
    ("the Christmas party was booked at the Malmaison", ("Orbit", "christmas_party_place", "Malmaison")),
])
def test_a_team_event_said_bare_is_the_event(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text", [
    "Tomasz now lives in Porto.",  # a person's home: the adverb is no part of a thing's name
    "Kafka replaced nothing yet",
    "Snowflake and Dagster are both live",
    "the kids are great",
])
def test_a_name_is_not_read_as_a_thing(text):
    assert [t for t in triples(text) if t[1].endswith(("_tool", "_place", "_date"))] == []


@pytest.mark.parametrize("text, expected", [
    ("logs have moved to Datadog", ("Orbit", "log_tool", "Datadog")),
    ("The CI moved to GitHub Actions.", ("Orbit", "ci_tool", "GitHub Actions")),
    ("Our docs moved to Notion in May.", ("Orbit", "doc_tool", "Notion")),
    ("our docs have switched to Notion", ("Orbit", "doc_tool", "Notion")),
    ("tickets moved to Linear", ("Orbit", "ticket_tool", "Linear")),
])
def test_a_function_moved_to_a_tool_without_the_old_one(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text", ["the offsite moved to 4 May", "The standup moved to 9:30."])
def test_an_event_moved_to_a_day_or_time_is_no_tool(text):
    assert [t for t in triples(text) if t[1].endswith("_tool")] == []


@pytest.mark.parametrize("text, expected", [
    ("the offsite moves from Reykjavik to Tallinn", ("Orbit", "offsite_place", "Tallinn", "Reykjavik")),
    ("change of plan, the offsite moves from Reykjavik to Tallinn", ("Orbit", "offsite_place", "Tallinn", "Reykjavik")),
    ("anti-cheat moves from EasyGuard to BattlEye", ("Orbit", "anti_cheat_tool", "BattlEye", "EasyGuard")),
    ("paging is moving from PagerDuty to Rootly this month", ("Orbit", "on_call_tool", "Rootly", "PagerDuty")),
])
def test_a_switch_in_the_present_and_once_under_way(text, expected):
    assert switches(text) == [expected]


def test_a_switch_still_ahead_is_a_plan_and_no_value():
    assert triples("paging is moving from PagerDuty to Rootly in September 2026") == []


@pytest.mark.parametrize("text, expected", [
    ("retro is moving to Thursday afternoons", ("Orbit", "retro_schedule", "on Thursday afternoons")),
    ("The retro moved to Thursdays.", ("Orbit", "retro_schedule", "on Thursdays")),
    ("demos have moved to Fridays", ("Orbit", "demo_schedule", "on Fridays")),
])
def test_an_event_moved_to_a_recurring_day_is_its_schedule(text, expected):
    assert triples(text) == [expected]


def test_one_meeting_moved_to_a_day_is_no_schedule():
    assert triples("We moved the meeting to Tuesday.") == []


@pytest.mark.parametrize("text, speaker, expected", [
    ("Olu will own the store service.", "maya", ("Olu", "owns", "store service")),
    ("Olu is going to own the store service.", "maya", ("Olu", "owns", "store service")),
    ("I'll own the live events calendar", "bastien", ("bastien", "owns", "live events calendar")),
    ("I will be in charge of on-call.", "maya", ("maya", "owns", "on-call")),
    ("Nadia will lead Orbit", "ines", ("Nadia", "leads", "Orbit")),
    ("Olu is running the store service.", "maya", ("Olu", "leads", "store service")),
    ("Olu has been running the store service.", "maya", ("Olu", "leads", "store service")),
    ("I'm leading the data migration", "keiko", ("keiko", "leads", "data migration")),
])
def test_owning_and_leading_announced_or_in_the_progressive(text, speaker, expected):
    assert triples(text, speaker=speaker) == [expected]


@pytest.mark.parametrize("text", ["I will move to Berlin.", "I'm running late today", "we'll run Kafka on MSK",
                                  "Hana will take over as release lead"])
def test_other_plans_and_runnings_are_no_ownership(text):
    assert [t for t in triples(text) if t[1] in {"owns", "leads", "lives_in"} or t[1].endswith("_tool")] == []


@pytest.mark.parametrize("text, speaker, expected", [
    ("matchmaking is Rohan's now", "dario", ("Rohan", "owns", "matchmaking")),
    ("QA for live events is me", "nadia", ("nadia", "owns", "QA for live events")),
    ("the on-call rota is me now", "olu", ("olu", "owns", "on-call rota")),
    ("the store service (our Xsolla integration) is owned by Olu", "ines", ("Olu", "owns", "store service")),
    ("reminder that the store service is owned by Olu", "ines", ("Olu", "owns", "store service")),
])
def test_ownership_said_from_the_thing(text, speaker, expected):
    assert triples(text, speaker=speaker) == [expected]


def test_the_problem_being_me_is_no_ownership():
    assert triples("The problem is me.") == []


@pytest.mark.parametrize("text, speaker, expected", [
    ("Felix's manager is Oskar.", "maya", ("Felix", "reports_to", "Oskar")),
    ("Felix's new manager is Oskar", "maya", ("Felix", "reports_to", "Oskar")),
    ("Felix's boss has been Oskar since May.", "maya", ("Felix", "reports_to", "Oskar")),
    ("Felix's manager is me now", "oskar", ("Felix", "reports_to", "oskar")),
    ("Felix will report to Oskar.", "maya", ("Felix", "reports_to", "Oskar")),
    ("From June I will report to Oskar.", "felix", ("felix", "reports_to", "Oskar")),
])
def test_a_reporting_line_said_from_the_report_or_announced(text, speaker, expected):
    assert triples(text, speaker=speaker) == [expected]


@pytest.mark.parametrize("text, expected", [
    ("Statsig is our experimentation platform now", ("Orbit", "experimentation_tool", "Statsig")),
    ("Linear is our issue tracker.", ("Orbit", "ticket_tool", "Linear")),
    ("Buildkite has become our CI", ("Orbit", "ci_tool", "Buildkite")),
    ("Figma was the team's design tool", ("Orbit", "design_tool", "Figma")),
])
def test_the_tool_said_before_its_function(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text", ["Priya is our new designer.", "Ruben is now our tech lead."])
def test_a_person_said_before_a_role_stays_a_role(text):
    assert [t[1] for t in triples(text)] == ["role"]


def test_status_is_not_a_plural():
    assert function_key("status page") == "status_page"


@pytest.mark.parametrize("text, speaker, expected", [
    ("moved from Toronto to Montréal! finally in the office every day", "rohan", [("rohan", "lives_in", "Montréal")]),
    ("settled in Portobello. commuting twice a week", "dario", [("dario", "lives_in", "Portobello")]),
    ("promoted to staff SRE", "olu", [("olu", "role", "staff SRE")]),
    # stop 38: capitalised as the message's first word, and a home signed for or bought
    ("Moved to Four Corners this weekend! real yard", "priya", [("priya", "lives_in", "Four Corners")]),
    ("finally out of the van!!! signed a lease on a little place in Churchill", "nico", [("nico", "lives_in", "Churchill")]),
    ("Finally signed the lease for a flat in Leith, keys on Friday", "dario", [("dario", "lives_in", "Leith")]),
])
def test_a_speakers_news_said_without_i_in_a_teams_chat(text, speaker, expected):
    assert triples(text, speaker=speaker) == expected


@pytest.mark.parametrize("text", ["started at 9 today", "moved the meeting to Friday", "Bought a new espresso machine for the office"])
def test_other_subjectless_clauses_give_no_news(text):
    assert triples(text) == []


# Stop 38: a home bought, leased or moved into is where its buyer lives, in any person and tense; stop 39: a move "out
# to" a town, the new place said after leaving the old one, and a trip home to a town (where one is from).
@pytest.mark.parametrize("text, speaker, expected", [
    ("Sam and I finally closed on the house up Bridger Canyon!! strong backs welcome", "dana", ("dana", "lives_in", "Bridger Canyon")),
    ("Personal news: Marisol and I bought a house in Livingston!", "luis", ("luis", "lives_in", "Livingston")),
    ("we've bought a house in Cove Bay! halfway between the two branches", "priya", ("priya", "lives_in", "Cove Bay")),
    ("I just bought a new flat in Glasgow", "maya", ("maya", "lives_in", "Glasgow")),
    ("Tomas has bought a cottage in Hexham", "maya", ("Tomas", "lives_in", "Hexham")),
    ("Moved out to Tawa. Turns out the train's actually fine", "ravi", ("ravi", "lives_in", "Tawa")),
    ("I moved out to Tawa last month", "ravi", ("ravi", "lives_in", "Tawa")),
    ("Priya has moved out to Tawa", "maya", ("Priya", "lives_in", "Tawa")),
    ("moved out of Headingley at last — new place is in Meanwood. There's a garden", "kwame", ("kwame", "lives_in", "Meanwood")),
    ("Home to Gisborne for the long weekend, see ya", "mere", ("mere", "is_from", "Gisborne")),
    ("I'm going home to Cork for Christmas", "maya", ("maya", "is_from", "Cork")),
    ("flew home to Bremen for my dad's 70th", "tobias", ("tobias", "is_from", "Bremen")),
    ("Tomas went home to Porto for the summer", "maya", ("Tomas", "is_from", "Porto")),
])
def test_a_home_bought_a_move_out_a_new_place_and_a_trip_home(text, speaker, expected):
    assert expected in triples(text, speaker=speaker)


@pytest.mark.parametrize("text", ["going home to bed", "heading home to the kids", "new house is in a great spot",
                                  "we moved the servers out to Dublin"])
def test_home_said_otherwise_is_no_home_town_or_move(text):
    assert not [t for t in triples(text) if t[1] in ("is_from", "lives_in")]


@pytest.mark.parametrize("text", ["We bought a new espresso machine for the office", "I bought a house plant in Ikea",
                                  "we haven't bought a house in Leeds yet"])
def test_anything_else_bought_is_no_home(text):
    assert not [t for t in triples(text) if t[1] == "lives_in"]


@pytest.mark.parametrize("text, speaker, expected", [
    ("I'm moving to economy design, reporting to Mireille Dubois, lead economy designer", "keiko", ("keiko", "reports_to", "Mireille Dubois")),
    ("I joined the platform group, reporting to Oskar", "maya", ("maya", "reports_to", "Oskar")),
    ("Priya joined as head of data, now reporting to Oskar.", "maya", ("Priya", "reports_to", "Oskar")),
])
def test_a_reporting_line_said_in_a_participle(text, speaker, expected):
    assert expected in triples(text, speaker=speaker)


@pytest.mark.parametrize("text, expected", [
    ("CI is fully on GitLab CI now", ("Orbit", "ci_tool", "GitLab CI")),
    ("our docs are entirely in Notion", ("Orbit", "doc_tool", "Notion")),
    ("Rootly is live for paging", ("Orbit", "on_call_tool", "Rootly")),
    ("Notion went live for docs", ("Orbit", "doc_tool", "Notion")),
])
def test_a_tool_said_fully_in_place_or_live_for_a_function(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text, speaker, expected", [
    ("Before Bramble I was at Glovo for three years, so I've seen a few delivery apps.", "joaquin", "Glovo"),
    ("Before this I spent four years at Zalando.", "felix", "Zalando"),
    ("before Kestrel I worked at Picnic on their warehouse software", "ayo", "Picnic"),
    ("Before this job I was at Fujitsu doing data centre operations.", "kwame", "Fujitsu"),
    ("before Kestrel I was an SRE at Cartwheel, the e-commerce place", "olu", "Cartwheel"),
    ("I was at Salford Royal for five years before this, mostly on Epic.", "tobias", "Salford Royal"),
    ("I worked for Monzo before joining the team", "priya", "Monzo"),
    ("I came over from the University of Salford where I ran research IT projects.", "oona", "University of Salford"),
    ("joined from Spreewald Analytics in Berlin", "liesel", "Spreewald Analytics"),
    ("previously at Beacon Labs doing console cert testing", "tariq", "Beacon Labs"),
    ("My last job was at Lighthouse QA.", "tariq", "Lighthouse QA"),
])
def test_where_the_speaker_worked_before_in_any_phrasing(text, speaker, expected):
    assert (speaker, "worked_at", expected) in triples(text, speaker=speaker)


@pytest.mark.parametrize("text", ["Before lunch I was at the gym.", "Before the standup I was with Anna.", "I came over from the kitchen"])
def test_where_someone_was_before_something_is_no_employer(text):
    assert [t for t in triples(text) if t[1] == "worked_at"] == []


@pytest.mark.parametrize("text, speaker, expected", [
    ("Hana will take over as EHR analyst lead when Rosalind leaves, and she'll report to me directly.", "ines",
     [("Hana", "role", "EHR analyst lead"), ("Hana", "reports_to", "ines")]),
    ("Tariq takes over as QA lead from Nadia.", "maya", [("Tariq", "role", "QA lead")]),
    ("Tariq took over as the QA lead", "maya", [("Tariq", "role", "QA lead")]),
])
def test_taking_over_as_a_role_is_the_role_and_she_is_the_one_named(text, speaker, expected):
    assert triples(text, speaker=speaker) == expected
