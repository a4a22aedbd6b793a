"""The offline extractor reads sentence structure (issue 24, point 2, second pass): a subject, a
verb group in any tense (present, past, perfect, progressive), an object and the prepositional
phrases after it decide the fact, so each shape below holds in several tenses and persons, with
"we", "the team", "our team" and the team's name as one subject. Each case failed before this
change (the dev set retrieval/scenarios/dev-c.yaml holds them in a conversation)."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline import extract
from memories.extraction.vocabulary import CORRECTS_CURRENT, canonical_attribute

SAID = datetime(2026, 6, 15, 12, tzinfo=UTC)
TEAM = "Orbit"


def facts(text: str, *, team: str | None = TEAM, speaker: str = "maya", said: datetime = SAID):
    return [(f.subject, canonical_attribute(f.attribute), f.value, f.previous_value, f.corrects)
            for f in extract(text=text, speaker=speaker, occurred_at=said, team=team).facts]


def triples(text: str, **kwargs):
    return [f[:3] for f in facts(text, **kwargs)]


@pytest.mark.parametrize("text", [
    "We deploy with Argo CD.",
    "We deployed with Argo CD.",
    "We have been deploying with Argo CD.",
    "We're deploying with Argo CD.",
    "The team deploys with Argo CD.",
    "Orbit deploys via Argo CD.",
])
def test_a_verb_with_a_tool_names_the_function_by_the_verb(text):
    assert triples(text) == [("Orbit", "deploy_tool", "Argo CD")]


@pytest.mark.parametrize("text", [
    "We track bugs in Jira.",
    "The team tracks bugs in Jira.",
    "Our team tracked bugs in Jira.",
    "Orbit has tracked bugs in Jira since 2023.",
    "We are tracking bugs in Jira.",
])
def test_a_verb_and_its_object_with_a_tool_names_the_function_by_the_object(text):
    assert triples(text) == [("Orbit", "ticket_tool", "Jira")]  # bugs, issues and tickets are one function


@pytest.mark.parametrize("text", [
    "We met in Lisbon.",
    "We had dinner with Anna.",
    "We went to Porto.",
    "We celebrated on Friday.",
    "I deploy with Argo CD.",  # a person's habit, not the team's tool
])
def test_where_the_team_went_or_whom_it_met_is_no_tool(text):
    assert [f for f in triples(text) if f[1].endswith("_tool")] == []


@pytest.mark.parametrize("text", [
    "We have replaced PagerDuty with Opsgenie for alerting.",
    "We replaced PagerDuty with Opsgenie for alerting.",
    "The team replaced PagerDuty with Opsgenie for alerting.",
    "Orbit has replaced PagerDuty with Opsgenie for paging.",
])
def test_a_replacement_that_names_its_function_is_that_function_s_tool(text):
    assert facts(text) == [("Orbit", "on_call_tool", "Opsgenie", "PagerDuty", None)]


@pytest.mark.parametrize("text", [
    "We left Slack for Zulip.",
    "We've left Slack for Zulip.",
    "The team abandoned Slack in favour of Zulip.",
    "Orbit moved away from Slack for Zulip.",
])
def test_a_team_leaving_one_tool_for_another_is_a_switch_not_a_job(text):
    assert facts(text) == [("Orbit", "replaced_value", "Zulip", "Slack", None)]


def test_a_person_leaving_a_company_for_another_is_still_a_job():
    assert triples("I left Google for Meta.") == [("maya", "works_at", "Google")]


@pytest.mark.parametrize("text", [
    "The metrics API belongs to Marguerite.",
    "The metrics API belonged to Marguerite.",
    "The metrics API now belongs to Marguerite.",
    "The metrics API is owned by Marguerite.",
    "The metrics API has been maintained by Marguerite.",
    "Our metrics API is Marguerite's now.",
])
def test_ownership_said_from_the_thing_owned(text):
    assert triples(text) == [("Marguerite", "owns", "metrics API")]


@pytest.mark.parametrize("text", [
    "Yusuf handed the billing pipeline over to Hana.",
    "Yusuf has handed over the billing pipeline to Hana.",
    "I passed the billing pipeline to Hana.",
    "Hana took over the billing pipeline from Yusuf.",
    "Hana has taken over the billing pipeline from Yusuf.",
])
def test_ownership_handed_over_is_the_receiver_s(text):
    assert triples(text) == [("Hana", "owns", "billing pipeline")]


def test_a_rotation_run_by_someone_is_led_by_them():
    assert triples("Olek runs the on-call rotation.") == [("Olek", "leads", "on-call rotation")]
    assert triples("The on-call rotation is run by Olek.") == [("Olek", "leads", "on-call rotation")]


@pytest.mark.parametrize("text", [
    "Our weekly demo happens in the Larch room.",
    "The demo took place in the Larch room.",
    "Demos are held in the Larch room.",
    "The weekly demo has taken place in the Larch room.",
    "Orbit's demo happens in the Larch room.",
])
def test_where_a_team_event_happens(text):
    assert triples(text) == [("Orbit", "demo_place", "Larch room")]


@pytest.mark.parametrize("text, expected", [
    ("Demos are on Thursdays.", [("Orbit", "demo_schedule", "on Thursdays")]),
    ("Demos are on Fridays at 4pm.", [("Orbit", "demo_schedule", "on Fridays"), ("Orbit", "demo_time", "4pm")]),
    ("Standup has moved to 10:15.", [("Orbit", "standup_time", "10:15")]),
    ("Standup moved to 10:15.", [("Orbit", "standup_time", "10:15")]),
    ("Retros are in the Oak room.", [("Orbit", "retro_place", "Oak room")]),
])
def test_a_team_event_said_bare_or_in_the_plural(text, expected):
    assert triples(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("The query engine beta ships on 2 December 2026.", ("Orbit", "query_engine_beta_date", "2 December 2026")),
    ("The query engine beta shipped on 2 December 2026.", ("Orbit", "query_engine_beta_date", "2 December 2026")),
    ("The catalog launch slipped to 6 October 2026.", ("Orbit", "catalog_launch_date", "6 October 2026")),
    ("The catalog launch has slipped to 6 October 2026.", ("Orbit", "catalog_launch_date", "6 October 2026")),
    ("Ferry Wallet moved to 4 November 2026.", ("Orbit", "ferry_wallet_date", "4 November 2026")),
    ("Harbour Pass is pushed to 30 June 2026.", ("Orbit", "harbour_pass_date", "30 June 2026")),
    ("The Harbour Pass feature launches on 2 July 2026.", ("Orbit", "harbour_pass_date", "2 July 2026")),
])
def test_an_event_s_day_said_with_its_own_verb(text, expected):
    assert triples(text) == [expected]


def test_a_person_moving_is_no_event_s_day():
    assert triples("Tomasz moved to 4 Elm Street.") == [("Tomasz", "lives_in", "4 Elm Street")]
    assert triples("I moved to Porto on 4 May 2026.") == [("maya", "lives_in", "Porto")]


@pytest.mark.parametrize("text, speaker, expected", [
    ("Hi, I'm Priyanka, the new engineering manager, based in Pune.", "priyanka",
     [("priyanka", "role", "engineering manager"), ("priyanka", "lives_in", "Pune")]),
    ("Hi all, Greta, head of design, in Copenhagen.", "greta", [("greta", "role", "head of design"), ("greta", "lives_in", "Copenhagen")]),
    ("Carmen here, Android engineer, living in Zaragoza.", "carmen", [("carmen", "role", "Android engineer"), ("carmen", "lives_in", "Zaragoza")]),
    ("I'm the backend person for the mobile API, based in Tbilisi.", "dmitri", [("dmitri", "lives_in", "Tbilisi")]),
    ("Greta, can you check this?", "maya", []),  # an address, not an introduction
])
def test_an_introduction_s_appositions_are_the_speaker_s(text, speaker, expected):
    assert triples(text, speaker=speaker) == expected


@pytest.mark.parametrize("text", [
    "We've chosen Parquet as the storage format.",
    "We chose Parquet as the storage format.",
    "The team has picked Parquet as the storage format.",
    "Orbit went with Parquet as the storage format.",
])
def test_a_choice_in_any_tense(text):
    assert triples(text) == [("Orbit", "storage_format_tool", "Parquet")]


@pytest.mark.parametrize("text, expected", [
    ("I was wrong about Porto, the offsite is in Braga.", ("Orbit", "offsite_place", "Braga", None, "Porto")),
    ("Sorry, I was wrong about Porto: the offsite is in Braga.", ("Orbit", "offsite_place", "Braga", None, "Porto")),
    ("My mistake about Porto, the offsite's in Braga.", ("Orbit", "offsite_place", "Braga", None, "Porto")),
    ("I was wrong about the time: standup is at 10:30.", ("Orbit", "standup_time", "10:30", None, CORRECTS_CURRENT)),
    ("Scratch that, the offsite will be in Salzburg.", ("Orbit", "offsite_place", "Salzburg", None, CORRECTS_CURRENT)),
    ("My mistake: demos are on Thursdays.", ("Orbit", "demo_schedule", "on Thursdays", None, CORRECTS_CURRENT)),
    ("Oops, it's 9 December for the beta, not 2 December.", ("maya", "corrected_value", "9 December", None, "2 December")),
    ("It's actually Figma we use now, not Sketch.", ("maya", "corrected_value", "Figma", None, "Sketch")),
])
def test_corrections_in_more_forms(text, expected):
    assert facts(text) == [expected]


def test_a_clause_that_dates_another_thing_does_not_date_the_sentence():
    got = extract(text="No, the hackathon is in Zadar, Split was last year.", speaker="alma", occurred_at=SAID, team=TEAM)
    assert [(f.attribute, f.value, f.valid_from) for f in got.facts] == [("hackathon_place", "Zadar", None)]
    assert got.occurred_at is None


# Third pass (issue 24, points 2 and 4; the development set is now retrieval/scenarios/heldout-c.yaml):
# the classes of shape its failures showed, each in sentences of our own, several tenses and persons.

@pytest.mark.parametrize("text", [
    "CI news: we migrated from Jenkins to Drone last week.",
    "Quick CI update: we've switched from Jenkins to Drone.",
    "Continuous integration update: the team moved from Jenkins to Drone.",
])
def test_a_label_before_a_colon_names_the_function_of_a_switch(text):
    assert [f[:4] for f in facts(text)] == [("Orbit", "ci_tool", "Drone", "Jenkins")]


@pytest.mark.parametrize("text, expected", [
    ("Heads up: the retro moved from Lisbon to Porto.", ("Orbit", "retro_place", "Porto")),
    ("Personal news: I relocated to Bergen last month!", ("maya", "lives_in", "Bergen")),
    ("Small update: Tomasz has moved to Gdansk.", ("Tomasz", "lives_in", "Gdansk")),
    ("Org change: Ruben is now our tech lead.", ("Ruben", "role", "tech lead")),
    ("Decision from the planning call: we're dropping the beta flag.", ("Orbit", "decision", "drop the beta flag")),
    ("Leads agreed on Monday: the hackathon will be remote.", ("Orbit", "decision", "the hackathon will be remote")),
])
def test_a_label_before_a_colon_heads_the_statement(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text, wrong", [
    ("Typo earlier: the offsite is in Girona, not Gerona.", "Gerona"),
    ("I misspoke yesterday: the travel budget is 9,000 euros, not 6,000.", "6,000"),
    ("I was off by a week, sorry: the code freeze is 18 May, not 25 May.", "25 May"),
])
def test_a_label_that_says_it_corrects(text, wrong):
    assert [f[4] for f in facts(text)] == [wrong]


@pytest.mark.parametrize("text", [
    "The billing service is mine.",
    "The billing service is mine now; ping me about invoices.",
    "The billing service has been mine since March.",
    "The billing service is owned by me.",
    "Luis handed me the billing service.",
    "Luis has handed me the billing service, so it's mine now.",
    "I'm taking ownership of the billing service.",
    "I took ownership of the billing service.",
    "Confirmed, the billing service is mine to run.",
])
def test_ownership_said_with_a_possessive_pronoun(text):
    assert ("maya", "owns", "billing service") in triples(text)


@pytest.mark.parametrize("text", [
    "I'm handing the billing service over to Ruben.",
    "I handed the billing service over to Ruben.",
    "Maya has handed the billing service over to Ruben.",
])
def test_a_hand_over_in_any_tense_gives_the_receiver(text):
    assert triples(text) == [("Ruben", "owns", "billing service")]


@pytest.mark.parametrize("text, expected", [
    ("The minimum iOS version is iOS 16.", ("Orbit", "minimum_ios_version", "iOS 16")),
    ("The minimum iOS version was iOS 16.", ("Orbit", "minimum_ios_version", "iOS 16")),
    ("The launch price will be $14.99.", ("Orbit", "launch_price", "$14.99")),
    ("The travel budget for 2026 is 30,000 euros.", ("Orbit", "2026_travel_budget", "30,000 euros")),
    ("Our travel budget for 2026 was 30,000 euros.", ("Orbit", "2026_travel_budget", "30,000 euros")),
    ("The 2.0 release is set for 3 November 2026.", ("Orbit", "2_0_release_date", "3 November 2026")),
    ("Code freeze for the beta is 25 May.", ("Orbit", "beta_code_freeze_date", "25 May 2027")),  # the next 25 May after 15 June 2026
    ("The EU servers are in Dublin and the US ones are in Ohio.", ("Orbit", "eu_servers_place", "Dublin")),
    ("Design crits happen in the Larch room.", ("Orbit", "design_crits_place", "Larch room")),
    ("Playtests take place at the Pier Lab in Leith.", ("Orbit", "playtests_place", "Pier Lab, Leith")),
    ("The weekly playtest is on Tuesday mornings.", ("Orbit", "playtest_schedule", "on Tuesday mornings")),
    ("Sprints are three weeks long.", ("Orbit", "sprint_length", "three weeks")),
    ("The wiki is on Confluence.", ("Orbit", "wiki_tool", "Confluence")),
])
def test_a_thing_of_the_team_outside_the_known_list_when_its_value_is_a_name_an_amount_a_date_or_a_place(text, expected):
    assert triples(text)[0] == expected


def test_the_ones_after_a_thing_are_that_thing():
    assert triples("The EU servers are in Dublin and the US ones are in Ohio.")[1] == ("Orbit", "us_servers_place", "Ohio")


@pytest.mark.parametrize("text", ["The kids are great.", "The lake was freezing though.", "The emoji situation is out of control."])
def test_a_thing_with_a_describing_value_is_no_fact(text):
    assert triples(text) == []


@pytest.mark.parametrize("text, expected", [
    ("Sentry replaced Rollbar for error tracking.", ("Orbit", "error_tool", "Sentry", "Rollbar")),
    ("Sentry has replaced Rollbar for error tracking.", ("Orbit", "error_tool", "Sentry", "Rollbar")),
    ("Error tracking moved from Rollbar to Sentry this week.", ("Orbit", "error_tool", "Sentry", "Rollbar")),
    ("The EU servers moved from Dublin to Paris.", ("Orbit", "eu_servers_place", "Paris", "Dublin")),
    ("The EU servers have moved from Dublin to Paris.", ("Orbit", "eu_servers_place", "Paris", "Dublin")),
    ("From today the team does video calls on Meet instead of Zoom.", ("Orbit", "video_tool", "Meet", "Zoom")),
    ("We held video calls on Meet instead of Zoom.", ("Orbit", "video_tool", "Meet", "Zoom")),
    ("Our source code and assets live in Perforce.", ("Orbit", "code_tool", "Perforce", None)),
    ("We're pushing the launch from 12 May to 9 June 2026.", ("Orbit", "launch_date", "9 June 2026", "12 May 2026")),
    ("We pushed the launch from 12 May to 9 June 2026.", ("Orbit", "launch_date", "9 June 2026", "12 May 2026")),
])
def test_switches_and_moves_in_more_shapes(text, expected):
    assert [f[:4] for f in facts(text)] == [expected]


@pytest.mark.parametrize("text", ["Maya replaced Tom as lead.", "We moved the meeting to Tuesday."])
def test_a_person_replaced_or_a_meeting_moved_is_no_tool(text):
    assert [f for f in triples(text) if f[1].endswith(("_tool", "_place"))] == []


@pytest.mark.parametrize("text, expected", [
    ("I'm working remotely from Porto for now.", ("maya", "lives_in", "Porto")),
    ("I work from Porto.", ("maya", "lives_in", "Porto")),
    ("Tomasz works remotely from Porto.", ("Tomasz", "lives_in", "Porto")),
    ("I'm in Porto.", ("maya", "lives_in", "Porto")),
    ("Priya moved to the publisher's London office; she lives in London now.", ("Priya", "lives_in", "London")),
])
def test_where_people_are_based_said_in_more_ways(text, expected):
    assert triples(text) == [expected]


@pytest.mark.parametrize("text", ["I work from home.", "I'm in Porto this week.", "I'm in the office today."])
def test_a_visit_or_home_office_is_no_home(text):
    assert [f for f in triples(text) if f[1] == "lives_in"] == []


@pytest.mark.parametrize("text, expected", [
    ("Actually two weeks, not three.", ("maya", "corrected_value", "two weeks", None, "three")),
    ("Haha no, I'm in Valletta.", ("maya", "lives_in", "Valletta", None, None)),
    ("Scratch that, Ines owns localization, not me.", ("Ines", "owns", "localization", None, CORRECTS_CURRENT)),
    ("I was wrong, the travel budget is 18,000 euros, not 15,000.", ("Orbit", "travel_budget", "18,000 euros", None, "15,000")),
])
def test_corrections_of_amounts_and_of_holders(text, expected):
    assert facts(text) == [expected]


@pytest.mark.parametrize("text", ["So as of April I report to Ruben.", "As of April, I report to Ruben.", "Ruben's my manager from April."])
def test_as_of_a_month_is_the_nearest_such_month(text):
    got = extract(text=text, speaker="maya", occurred_at=datetime(2026, 3, 30, 12, tzinfo=UTC), team=TEAM).facts
    assert [(f.attribute, f.value, f.valid_from.date().isoformat()) for f in got] == [("reports_to", "Ruben", "2026-04-01")]


def test_a_date_in_a_sentence_that_states_nothing_dates_nothing():
    got = extract(text="Nope, I run the on-call rotation. Tomasz is just on call this week.", speaker="devendra", occurred_at=SAID, team=TEAM)
    assert [(f.attribute, f.value) for f in got.facts] == [("leads", "on-call rotation")]
    assert got.occurred_at is None


@pytest.mark.parametrize("text, home, part", [
    ("I live in Lisbon, in Alfama.", "Lisbon", "Alfama"),
    ("I've moved! I now live in Lisbon, in Alfama.", "Lisbon", "Alfama"),
    ("I live in Lisbon, up in the Alfama, with two cats.", "Lisbon", "Alfama"),
])
def test_a_part_of_town_after_the_town_is_the_neighbourhood_not_another_home(text, home, part):
    assert triples(text) == [("maya", "lives_in", home), ("maya", "neighbourhood", part)]


def test_a_correction_of_a_thing_said_in_fewer_words_still_gives_its_value():
    assert facts("I misspoke yesterday: the minimum is Android 10, not Android 9.") == [("Orbit", "minimum", "Android 10", None, "Android 9")]
    assert facts("The coffee is Lavazza.") == []


@pytest.mark.parametrize("text", ["The pleasure is mine.", "The mistake was mine, sorry.", "That one is mine.", "The fault is all mine."])
def test_a_feeling_or_a_fault_said_as_mine_is_owned_by_nobody(text):
    assert [f for f in triples(text) if f[1] == "owns"] == []


# Fourth pass (issue 24): mechanisms rather than phrasings; the sentences are ours, not a suite's.
@pytest.mark.parametrize("text, attribute", [
    ("The spring retreat is in Sintra.", "spring_offsite_place"),
    ("Our spring retreat will be in Sintra.", "spring_offsite_place"),
    ("The spring retreat was in Sintra.", "spring_offsite_place"),
    ("Retrospectives are at the Lantern from now on.", "retro_place"),
    ("Our retrospectives were held at the Lantern.", "retro_place"),
])
def test_a_synonym_of_a_team_thing_names_the_thing_not_a_tool(text, attribute):
    assert [(a, v.removeprefix("the ")) for _, a, v in triples(text)] == [(attribute, "Sintra" if "Sintra" in text else "Lantern")]


@pytest.mark.parametrize("text", [
    "The autumn offsite for 2027 is in Sintra.",
    "The autumn offsite for 2027 will be in Sintra, 3 to 5 October.",
    "Our autumn offsite for 2027 was in Sintra.",
])
def test_a_qualifier_names_which_thing_before_the_thing_is_judged(text):
    assert triples(text) == [("Orbit", "2027_autumn_offsite_place", "Sintra")]


@pytest.mark.parametrize("text, place", [
    ("The hackathon is 3 to 5 March at the Forge in Tartu.", "Forge, Tartu"),
    ("The summit will be in Tartu, 3-5 March.", "Tartu"),
    ("The hackathon was from 3 to 5 March 2026 in Tartu.", "Tartu"),
])
def test_a_range_of_days_is_no_value_of_the_thing_and_leaves_its_place_readable(text, place):
    assert [(a.rsplit("_", 1)[-1], v) for _, a, v in triples(text)] == [("place", place)]


@pytest.mark.parametrize("text", ["As of this week our CI is on Drone.", "From today our CI is on Drone.", "As of today, our CI runs on Drone."])
def test_as_of_a_relative_time_dates_the_fact_and_is_not_its_thing(text):
    assert triples(text) == [("Orbit", "ci_tool", "Drone")]


@pytest.mark.parametrize("text, attribute", [
    ("Our monitoring is Grafana Cloud.", "monitoring_tool"),
    ("We use Grafana Cloud for monitoring.", "monitoring_tool"),
    ("Our dashboards are in Grafana Cloud.", "dashboard_tool"),
])
def test_monitoring_and_dashboards_are_two_functions(text, attribute):
    assert triples(text) == [("Orbit", attribute, "Grafana Cloud")]


@pytest.mark.parametrize("text, speaker, expected", [
    ("Bea reports to me.", "maya", ("Bea", "reports_to", "maya")),
    ("Bea reports to me from today.", "maya", ("Bea", "reports_to", "maya")),
    ("Bea reported directly to Tomasz.", "maya", ("Bea", "reports_to", "Tomasz")),
    ("Bea reports straight to Tomasz, not to me.", "maya", ("Bea", "reports_to", "Tomasz")),
    ("Tomasz is Bea's manager.", "maya", ("Bea", "reports_to", "Tomasz")),
    ("Tomasz was Bea's boss.", "maya", ("Bea", "reports_to", "Tomasz")),
])
def test_a_reporting_line_in_any_tense_with_object_pronouns_and_said_from_the_manager(text, speaker, expected):
    assert triples(text, speaker=speaker) == [expected]


@pytest.mark.parametrize("text, who", [
    ("Bea takes over payroll from Tomasz as of today.", "Bea"),
    ("I'm taking over payroll from Tomasz.", "maya"),
    ("Bea took over payroll from Tomasz.", "Bea"),
    ("Payroll is looked after by Bea now.", "Bea"),
    ("Bea looks after payroll.", "Bea"),
])
def test_taking_over_and_looking_after_are_ownership_in_every_tense(text, who):
    assert [(s, a, v.lower()) for s, a, v in triples(text)] == [(who, "owns", "payroll")]


@pytest.mark.parametrize("text", [
    "Basecamp's gone, we've been on Linear since Monday.",
    "We are on Linear now; Basecamp is switched off.",
    "We're on Linear now. Basecamp was finally shut down.",
])
def test_a_tool_said_gone_beside_the_one_used_now_is_a_switch(text):
    found = [(f[1], f[2], f[3]) for f in facts(text)]
    assert ("replaced_value", "Linear", "Basecamp") in found


@pytest.mark.parametrize("text", ["The data warehouse is on Redshift for now.", "Our data warehouse was on Redshift.", "Our data warehouse has been on Redshift since May."])
def test_a_thing_on_a_named_platform_is_its_tool(text):
    assert triples(text) == [("Orbit", "data_warehouse_tool", "Redshift")]


@pytest.mark.parametrize("text", ["We finally moved to Haarlem last weekend.", "We live in Haarlem now.", "We've moved to Haarlem, boxes everywhere.",
                                  "We are moving to Haarlem next month."])
def test_a_team_lives_nowhere_so_we_moved_is_the_speaker_s_household(text):
    assert all(subject == "maya" for subject, attribute, _ in triples(text) if attribute in {"lives_in", "lived_in"})
    assert ("Orbit", "lives_in") not in [(s, a) for s, a, _ in triples(text)]


@pytest.mark.parametrize("text", ["We finally moved to Haarlem last weekend.", "We've moved to Kraków, boxes everywhere.",
                                  "We moved to Frankfurt in May.", "We relocated to the Bay Area."])
def test_a_team_s_move_to_a_known_place_is_the_speaker_s_home(text):
    assert [(s, a) for s, a, _ in triples(text)] == [("maya", "lives_in")]


@pytest.mark.parametrize("text,tool", [
    ("We moved to Notion last week.", "Notion"),
    ("We've moved to GitHub Actions.", "GitHub Actions"),
    ("We have moved to Xero this year.", "Xero"),
    ("The team is moving to Slack in March.", "Slack"),  # said in June: March has come
    ("The team moved to Linear.", "Linear"),
    ("Orbit has moved to Snowflake.", "Snowflake"),  # a town in Arizona too small for the gazetteer
])
def test_a_team_s_move_to_a_name_that_is_no_place_is_a_tool_not_a_home(text, tool):
    assert triples(text) == [("Orbit", "uses", tool)]


def test_a_team_s_move_to_a_tool_said_beside_one_gone_is_a_switch():
    assert [(a, v, p) for _, a, v, p, _ in facts("Jira's gone, we moved to Linear.")] == [("replaced_value", "Linear", "Jira")]


@pytest.mark.parametrize("text", ["We're moving to Xero.", "We moved away from Jira.", "We're moving to Notion next month."])
def test_a_team_s_move_planned_or_away_from_a_tool_gives_no_home(text):
    assert [a for _, a, _ in triples(text) if a in {"lives_in", "lived_in"}] == []


def test_a_person_s_move_is_read_as_before():
    assert triples("I moved to Notion Falls.", team=None) == [("maya", "lives_in", "Notion Falls")]
    assert triples("We moved to Notion last week.", team=None)[0][1] == "lives_in"  # no team: a household's move


def test_our_office_is_still_the_team_s_place():
    assert triples("Our office is in Haarlem.") == [("Orbit", "office_place", "Haarlem")]


@pytest.mark.parametrize("text", ["Pages go to Priya.", "Alerts go to Yuki and Ewan from now on.", "The freezer alarms are monitored by Elpro, alerts go to Yuki."])
def test_one_of_the_scope_s_people_is_no_tool(text):
    found = [(f.attribute, f.value) for f in extract(text=text, speaker="maya", occurred_at=SAID, team=TEAM, people=["priya", "yuki", "ewan"]).facts]
    assert not [(a, v) for a, v in found if (a.endswith("_tool") or a in {"uses", "replaced_value"}) and v.split()[0] in {"Priya", "Yuki"}]


@pytest.mark.parametrize("text, expected", [("Pages go through PagerDuty.", ("Orbit", "on_call_tool", "PagerDuty")),
                                            ("We replaced Jenkins with GitHub Actions.", ("Orbit", "replaced_value", "GitHub Actions"))])
def test_a_tool_beside_the_scope_s_people_is_still_a_tool(text, expected):
    assert [(f.subject, canonical_attribute(f.attribute), f.value)
            for f in extract(text=text, speaker="maya", occurred_at=SAID, team=TEAM, people=["priya", "yuki"]).facts] == [expected]
