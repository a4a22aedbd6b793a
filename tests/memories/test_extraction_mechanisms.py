"""The offline extractor's fifth pass (issue 24, point 2): general mechanisms rather than shapes,
each shown in sentences of our own in several tenses and persons. Each case failed before the
change (a test per mechanism, able to fail: `git stash` the change and they do)."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline import extract
from memories.extraction.vocabulary import CORRECTION_ATTRIBUTE, CORRECTS_CURRENT, function_key, spelling_folded
from tests.memories.test_extraction_structure import TEAM
from tests.memories.test_extraction_structure import facts as facts_said

SAID = datetime(2026, 6, 17, 12, tzinfo=UTC)  # a Wednesday


def facts(text: str, **kwargs):
    return facts_said(text, said=kwargs.pop("said", SAID), **kwargs)


def triples(text: str, **kwargs):
    return [f[:3] for f in facts(text, **kwargs)]


# -- one key for a team's thing in its other names, abbreviations and spellings --------------------

@pytest.mark.parametrize("said, asked", [
    ("data warehouse", "DWH"),
    ("all the infra", "IaC"),
    ("infrastructure", "infra"),
    ("dashboards", "BI"),
    ("monitoring", "observability"),
    ("end-to-end tests", "e2e testing"),
    ("secrets", "secrets management"),
    ("feature flags", "feature toggles"),
    ("kickoff", "kick-off"),
    ("data pipelines", "ETL"),
    ("tickets", "issue tracker"),
    ("localisation", "localization"),
    ("catalogue", "catalog"),
    ("the design centre", "the design center"),
    ("standardised builds", "standardized builds"),
])
def test_other_names_of_one_thing_share_its_key(said, asked):
    assert function_key(said) == function_key(asked) != ""


@pytest.mark.parametrize("word", ["hour", "your", "four", "genre", "store", "entire", "size"])
def test_the_spelling_fold_leaves_other_words_alone_or_folds_them_alike(word):
    assert spelling_folded(word) == spelling_folded(word)  # symmetric by construction
    assert spelling_folded(word)[:3] == word[:3]


@pytest.mark.parametrize("text", [
    "We use Terraform for all the infra.",
    "We have been using Terraform for the whole infrastructure since 2024.",
    "Orbit uses Terraform for infrastructure.",
])
def test_a_function_said_with_a_quantifier_is_the_function(text):
    assert triples(text) == [("Orbit", "infra_tool", "Terraform")]


# -- corrections in other words ---------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("Actually it's 21 May for the launch.", "21 May"),
    ("Actually, it is Porto.", "Porto"),
    ("It's actually at the Kelp Room.", "Kelp Room"),
    ("Update on the retro: the room was double-booked, so it's actually at Harbour Hall.", "Harbour Hall"),
    ("No wait, I should have said Braga.", "Braga"),
    ("I should have written Thursday.", "Thursday"),
    ("Typo: Braga.", "Braga"),
])
def test_a_correction_in_other_words_names_the_right_value(text, value):
    assert (CORRECTION_ATTRIBUTE, value, CORRECTS_CURRENT) in [(f[1], f[2], f[4]) for f in facts(text)]


@pytest.mark.parametrize("text", [
    "Actually, I love it here.",
    "It's actually quite nice in Lisbon.",
    "Actually we had a great time.",
])
def test_actually_alone_corrects_nothing(text):
    assert [f for f in facts(text) if f[4]] == []


# -- days said relative to when, and days of things ----------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("The database migration went live yesterday.", "16 June 2026"),
    ("The database migration goes live tomorrow.", "18 June 2026"),
    ("The database migration starts next Monday, expect blips.", "22 June 2026"),
    ("Heads up: the database migration is on Friday night.", "19 June 2026"),
    ("The database migration happened today.", "17 June 2026"),
])
def test_an_event_said_with_a_relative_day_gets_that_day(text, value):
    assert ("Orbit", "database_migration_date", value) in triples(text)


@pytest.mark.parametrize("text, attribute", [
    ("The code freeze for Lisbon starts next Monday.", "lisbon_code_freeze_date"),
    ("The code freeze for Lisbon started on 3 June.", "lisbon_code_freeze_date"),
    ("The 1.4 upgrade to Postgres 17 is on Friday night.", "1_4_upgrade_to_postgres_17_date"),
])
def test_a_thing_that_says_for_or_to_itself_keeps_its_words(text, attribute):
    assert attribute in [f[1] for f in triples(text)]


@pytest.mark.parametrize("text, attribute, value", [
    ("We decided to ship the billing revamp on 14 September.", "billing_revamp_date", "14 September 2026"),
    ("The team agreed to launch in Oslo on 2 October.", "oslo_launch_date", "2 October 2026"),
    ("Orbit has decided to switch on the Leeds integration on 1 July.", "leeds_integration_date", "1 July 2026"),
    ("We've agreed to release the SDK on 30 June.", "sdk_date", "30 June 2026"),
])
def test_a_decision_that_sets_a_day_dates_the_thing(text, attribute, value):
    said = triples(text)
    assert ("Orbit", attribute, value) in said
    assert "decision" in [f[1] for f in said]


@pytest.mark.parametrize("text, who", [
    ("We've hired Ana as a data engineer, she starts on 1 July.", "Ana"),
    ("Ana joins as head of data on 1 July.", "Ana"),
    ("Ana is joining as our designer on 1 July.", "Ana"),
    ("I start at Cabify on 1 July.", "maya"),
    ("I'm starting at Cabify on 1 July.", "maya"),
])
def test_a_start_said_with_its_day_is_a_start_date(text, who):
    assert (who, "start_date", "1 July 2026") in triples(text)


def test_a_hire_gives_the_person_s_role():
    assert ("Ana", "role", "data engineer") in triples("We hired Ana as a data engineer.")


# -- the clause: framing phrases, plural subjects, "it", events on a service -----------------------

@pytest.mark.parametrize("text", [
    "For the record, CI runs on TeamCity.",
    "Just so you know, CI runs on TeamCity.",
    "As promised, CI runs on TeamCity.",
])
def test_a_framing_phrase_before_a_comma_is_no_part_of_the_clause(text):
    assert triples(text) == [("Orbit", "ci_tool", "TeamCity")]


def test_a_leading_phrase_with_a_time_is_kept():
    assert [f[1] for f in triples("In March, we moved to Berlin.", team=None)] == ["lives_in"]


@pytest.mark.parametrize("text, attribute, value", [
    ("Secrets live in HashiCorp Vault, never in the repo.", "secret_tool", "HashiCorp Vault"),
    ("Feature flags are managed in Flagsmith.", "flag_tool", "Flagsmith"),
    ("Data pipelines were orchestrated with Prefect.", "data_pipeline_tool", "Prefect"),
    ("Our deploys are automated with Argo CD.", "deploy_tool", "Argo CD"),
])
def test_a_plural_thing_with_a_tool_verb_is_the_team_s_tool(text, attribute, value):
    assert triples(text) == [("Orbit", attribute, value)]


@pytest.mark.parametrize("text", ["The Jansens live in Porto.", "Tomas lives in Porto."])
def test_people_living_somewhere_are_no_tool(text):
    assert [f for f in triples(text) if f[1].endswith("_tool")] == []


@pytest.mark.parametrize("text", [
    "Our builds run on Buildkite now. It replaced CircleCI over the break.",
    "We use Buildkite for builds. It has replaced CircleCI.",
    "We switched builds to Buildkite. It replaced CircleCI last week.",
])
def test_it_after_a_tool_is_that_tool(text):
    assert ("Orbit", "replaced_value", "Buildkite", "CircleCI") in [f[:4] for f in facts(text)]


@pytest.mark.parametrize("text, thing", [
    ("Daily standup is on Google Meet now.", "standup_place"),
    ("The retro is on Zoom.", "retro_place"),
    ("Our retros were on Zoom in 2025.", "retro_place"),
])
def test_an_event_on_a_service_is_held_there(text, thing):
    assert thing in [f[1] for f in triples(text)]


def test_a_repo_on_a_service_is_still_a_tool():
    assert triples("The repo is on GitHub.") == [("Orbit", "code_tool", "GitHub")]


@pytest.mark.parametrize("text", [
    "Our retros are every other Friday at the Ropewalk, first round is on whoever broke prod.",
    "Our retros are every other Friday at the Ropewalk, the snacks are on me.",
])
def test_a_comma_before_a_new_subject_and_verb_ends_the_clause(text):
    assert ("Orbit", "retro_place", "Ropewalk") in triples(text)


@pytest.mark.parametrize("text", [
    "We switched on-call from Opsgenie to incident.io this month.",
    "We've moved on-call from Opsgenie to incident.io.",
    "The team migrated on-call from Opsgenie to incident.io in May.",
])
def test_a_product_s_lowercase_name_is_a_name(text):
    assert ("Orbit", "on_call_tool", "incident.io") in triples(text)


@pytest.mark.parametrize("text, attribute, value", [
    ("The 2027 travel budget got approved: 52,000 euros.", "2027_travel_budget", "52,000 euros"),
    ("The travel budget has been confirmed: 52,000 euros.", "travel_budget", "52,000 euros"),
    ("The hackathon venue was confirmed: Het Bos.", "hackathon_venue", "Het Bos"),
])
def test_a_colon_after_a_verb_of_settling_is_the_copula(text, attribute, value):
    assert ("Orbit", attribute, value) in triples(text)


@pytest.mark.parametrize("text", [
    "Orbit moved from 1Password to Bitwarden, check your email for the invite.",
    "We've migrated from 1Password to Bitwarden, ping me if the invite is missing.",
    "We switched from 1Password to Bitwarden, please check your inbox.",
])
def test_an_imperative_after_a_comma_is_another_clause(text):
    said = facts(text)
    assert [(f[1], f[2], f[3]) for f in said] == [("replaced_value", "Bitwarden", "1Password")]


@pytest.mark.parametrize("text", [
    "Jira's gone, we've been on Shortcut since Monday.",
    "We've been on Shortcut since Monday.",
    "Orbit has been on Shortcut since Monday.",
])
def test_since_a_weekday_is_when_it_began(text):
    got = extract(text=text, speaker="maya", occurred_at=SAID, team=TEAM).facts
    assert [f.valid_from.date().isoformat() for f in got if f.value == "Shortcut"] == ["2026-06-15"]


@pytest.mark.parametrize("text, attribute", [
    ("The winter retreat this year is in Tallinn.", "2026_winter_offsite_place"),
    ("Our offsite next year will be in Tallinn.", "2027_offsite_place"),
    ("The kickoff last year was in Tallinn.", "2025_kickoff_place"),
])
def test_a_year_said_after_a_team_thing_names_which_one(text, attribute):
    assert [f[1] for f in triples(text)] == [attribute]


def test_a_year_said_of_a_person_still_dates_the_fact():
    got = extract(text="I moved to Berlin this year.", speaker="maya", occurred_at=SAID, team=TEAM).facts
    assert [(f.attribute, f.valid_from.date().isoformat()) for f in got] == [("lives_in", "2026-01-01")]


@pytest.mark.parametrize("text", [
    "Scratch that, the 3rd, finance moved it.",
    "Sorry, I meant the 3rd.",
    "Typo: 3rd.",
])
def test_an_ordinal_day_said_as_a_correction_is_a_value(text):
    assert ("maya", CORRECTION_ATTRIBUTE, "3rd") in triples(text)


@pytest.mark.parametrize("text, day", [
    ("Orbit moved from 1Password to Bitwarden on 1 March.", "2026-03-01"),
    ("We switched from 1Password to Bitwarden on March 1st.", "2026-03-01"),
    ("We've moved from 1Password to Bitwarden since 1 March.", "2026-03-01"),
    ("We moved from 1Password to Bitwarden on 1 July.", "2025-07-01"),  # said in June, in the past tense: last July
])
def test_a_day_without_its_year_is_read_by_the_tense(text, day):
    got = extract(text=text, speaker="maya", occurred_at=SAID, team=TEAM).facts
    assert [f.valid_from.date().isoformat() for f in got if f.value == "Bitwarden"] == [day]


def test_a_coming_day_without_its_year_is_the_next_one():
    got = extract(text="Ana starts on 1 March.", speaker="maya", occurred_at=SAID, team=TEAM).facts
    assert ("start_date", "1 March 2027") in [(f.attribute, f.value) for f in got]


def test_a_decided_day_stays_in_the_decision():
    assert ("Orbit", "decision", "ship the SDK on 3 July") in triples("We decided to ship the SDK on 3 July.")


@pytest.mark.parametrize("text", ["We moved the meeting to Tuesday.", "The demo moved to Thursday."])
def test_a_weekday_alone_is_no_date(text):
    assert [f for f in triples(text) if f[1].endswith("_date")] == []
