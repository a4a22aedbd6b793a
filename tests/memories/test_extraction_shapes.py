"""The offline extractor follows sentence shapes, not phrasings (issue 24, point 2): each shape in
present, past and perfect tenses, with "we", "the team", "our team" and the team's name as the
same subject, and "I" where a person says it; corrections of any earlier fact. Then the held-out
sentences (tests/memories/data/extraction_sentences.yaml, written before the rules were measured
on them) at the floor they reached, and a correction that supersedes through the memory."""

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from memories.extraction.offline import extract
from memories.extraction.vocabulary import CORRECTS_CURRENT, canonical_attribute

SAID = datetime(2026, 6, 15, 12, tzinfo=UTC)
TEAM = "Orbit"
SENTENCES = yaml.safe_load((Path(__file__).parent / "data" / "extraction_sentences.yaml").read_text())


def facts(text: str, *, team: str | None = TEAM, speaker: str = "Maya", said: datetime = SAID):
    return [(f.subject, canonical_attribute(f.attribute), f.value, f.previous_value, f.corrects)
            for f in extract(text=text, speaker=speaker, occurred_at=said, team=team).facts]


# The team as a subject, in every way it is said.
TEAM_SUBJECTS = ["We", "The team", "Our team", "Orbit"]


@pytest.mark.parametrize("subject", TEAM_SUBJECTS)
@pytest.mark.parametrize("verb", ["moved", "have moved", "switched", "migrated", "has migrated"])
def test_a_switch_from_a_to_b_is_the_new_tool_superseding_the_old(subject, verb):
    verb = verb.replace("have", "has") if subject == "Orbit" and verb.startswith("have") else verb
    got = facts(f"{subject} {verb} our CI from Jenkins to GitHub Actions in January 2025.")
    assert got == [("Orbit", "ci_tool", "GitHub Actions", "Jenkins", None)]
    dated = extract(text=f"{subject} {verb} our CI from Jenkins to GitHub Actions in January 2025.", speaker="Maya",
                    occurred_at=SAID, team=TEAM).facts[0]
    assert dated.valid_from.date().isoformat() == "2025-01-01"


@pytest.mark.parametrize("text, expected", [
    ("Orbit has migrated its ticketing from Trello to Linear.", ("Orbit", "ticket_tool", "Linear", "Trello", None)),
    ("The team switched their payment provider from Stripe to Adyen.", ("Orbit", "payment_tool", "Adyen", "Stripe", None)),
    ("We've moved chat off Discord and onto Slack.", ("Orbit", "chat_tool", "Slack", "Discord", None)),
    ("I switched my editor from Vim to VS Code.", ("Maya", "editor_tool", "VS Code", "Vim", None)),
    ("We moved the CI to Buildkite.", ("Orbit", "ci_tool", "Buildkite", None, None)),
])
def test_switches_in_other_words_and_persons(text, expected):
    assert facts(text) == [expected]


@pytest.mark.parametrize("text", [
    "We are moving the docs to Notion next week.",  # under way, its time still ahead: a plan
    "We might move the CI to Buildkite.",
    "We moved the meeting to Tuesday.",  # not a tool: no function
])
def test_plans_and_non_tools_give_nothing(text):
    assert facts(text) == []


def test_a_switch_under_way_in_a_month_that_has_come_is_done():
    said = datetime(2026, 8, 3, 12, tzinfo=UTC)
    assert facts("We're moving Orbit's chat from Teams to Slack in August 2026.", said=said) == [
        ("Orbit", "chat_tool", "Slack", "Teams", None)]


@pytest.mark.parametrize("text, expected", [
    ("We're switching chat from Teams to Slack.", ("Orbit", "chat_tool", "Slack", "Teams", None)),
    ("The team is migrating its tickets from Jira to Linear.", ("Orbit", "ticket_tool", "Linear", "Jira", None)),
    ("Orbit is moving CI from Jenkins to Buildkite.", ("Orbit", "ci_tool", "Buildkite", "Jenkins", None)),
])
def test_a_switch_under_way_that_names_both_ends_and_no_time_is_done(text, expected):
    assert facts(text) == [expected]


@pytest.mark.parametrize("text", [
    "We're switching chat from Teams to Slack next month.",
    "We're moving CI from Jenkins to Buildkite soon.",
    "We're planning on migrating tickets from Jira to Linear.",
    "We're switching chat from Teams to Slack after the launch.",
    "We are moving the docs to Notion.",  # one end named: still a plan
])
def test_a_switch_under_way_said_to_come_later_or_naming_one_end_stays_a_plan(text):
    assert facts(text) == []


@pytest.mark.parametrize("text", [
    "Our CI is GitHub Actions.",
    "Our CI was GitHub Actions.",
    "Our CI has been GitHub Actions since 2024.",
    "The team's CI is GitHub Actions.",
    "Orbit's CI is GitHub Actions.",
    "Our team's CI tool is GitHub Actions.",
])
def test_our_x_is_y_in_every_tense_and_subject(text):
    assert [f[:3] for f in facts(text)] == [("Orbit", "ci_tool", "GitHub Actions")]


@pytest.mark.parametrize("text", [
    "Our docs now live in Notion.",
    "The docs live in Notion.",
    "Our docs are kept in Notion.",
    "The docs are written in Notion.",
    "Orbit's docs are in Notion.",
])
def test_x_lives_in_y_is_the_tool_for_x(text):
    assert [f[:3] for f in facts(text)] == [("Orbit", "doc_tool", "Notion")]


@pytest.mark.parametrize("text", [
    "The team offsite is in Lisbon.",
    "The offsite was in Lisbon.",
    "Our offsite is in Lisbon.",
    "Orbit's offsite is in Lisbon.",
    "The offsite will be in Lisbon.",
    "The offsite has been moved to Lisbon.",
])
def test_a_team_event_in_a_place(text):
    assert [f[:3] for f in facts(text)] == [("Orbit", "offsite_place", "Lisbon")]


def test_a_team_event_s_day_time_and_place_are_each_a_fact():
    assert [f[:3] for f in facts("The retro is on Wednesdays at 3pm in the Kelp room.")] == [
        ("Orbit", "retro_schedule", "on Wednesdays"), ("Orbit", "retro_time", "3pm"), ("Orbit", "retro_place", "Kelp room")]
    assert [f[:3] for f in facts("Standup's now at 9:15, still in the Kelp room.")] == [
        ("Orbit", "standup_time", "9:15"), ("Orbit", "standup_place", "Kelp room")]


@pytest.mark.parametrize("text, expected", [
    ("The standup is at 9:30.", ("Orbit", "standup_time", "9:30")),
    ("Our standup has moved to 10:00.", ("Orbit", "standup_time", "10:00")),
    ("The budget is 40,000 euros.", ("Orbit", "budget", "40,000 euros")),
    ("The deadline is 14 March 2027.", ("Orbit", "deadline_date", "14 March 2027")),
    ("Our deadline was pushed to 20 April 2027.", ("Orbit", "deadline_date", "20 April 2027")),
    ("The repo is hosted on GitHub.", ("Orbit", "code_tool", "GitHub")),
    ("The owner of the billing service is Priya.", ("Priya", "owns", "billing service")),
    ("The billing service's owner is Priya.", ("Priya", "owns", "billing service")),
    ("The booking flow is Esi's now.", ("Esi", "owns", "booking flow")),
    ("The on-call lead is Tomasz.", ("Tomasz", "leads", "on-call")),
])
def test_the_x_is_y_about_a_team_thing(text, expected):
    assert [f[:3] for f in facts(text)] == [expected]


@pytest.mark.parametrize("text", ["The kids are great.", "The weather was lovely in Lisbon.", "The coffee is Lavazza."])
def test_the_x_is_y_about_anything_else_gives_nothing(text):
    assert facts(text) == []


@pytest.mark.parametrize("text, expected", [
    ("We decided to keep Postgres for the queue.", "keep Postgres for the queue"),
    ("We've decided to keep Postgres for the queue.", "keep Postgres for the queue"),
    ("The team agreed that we will keep Postgres for the queue.", "keep Postgres for the queue"),
    ("The decision is to keep Postgres for the queue.", "keep Postgres for the queue"),
    ("It was agreed that we keep Postgres for the queue.", "keep Postgres for the queue"),
    ("Decision: keep Postgres for the queue.", "keep Postgres for the queue"),
])
def test_decisions_in_every_tense_and_form(text, expected):
    assert [f[:3] for f in facts(text)] == [("Orbit", "decision", expected)]


@pytest.mark.parametrize("text, expected", [
    ("I now live in Lisbon.", ("Maya", "lives_in", "Lisbon")),
    ("Tomasz now lives in Porto.", ("Tomasz", "lives_in", "Porto")),
    ("I've been working at Acme since 2021.", ("Maya", "works_at", "Acme")),
    ("Priya has owned the billing service since May.", ("Priya", "owns", "billing service")),
    ("Alma is my boss.", ("Maya", "reports_to", "Alma")),
    ("Greta's now my manager.", ("Maya", "reports_to", "Greta")),
])
def test_people_in_first_and_third_person(text, expected):
    assert [f[:3] for f in facts(text)] == [expected]


def test_we_in_a_personal_scope_is_the_speaker():
    assert facts("We moved from Leeds to York.", team=None) == [("Maya", "lives_in", "York", "Leeds", None)]
    assert facts("Our CI is GitHub Actions.", team=None) == []  # a person's chat has no team tools


@pytest.mark.parametrize("text, expected", [
    ("Correction: the offsite is in Porto, not Lisbon.", ("Orbit", "offsite_place", "Porto", None, "Lisbon")),
    ("Actually, our CI is CircleCI, not GitHub Actions.", ("Orbit", "ci_tool", "CircleCI", None, "GitHub Actions")),
    ("The offsite is not in Lisbon, it is in Porto.", ("Orbit", "offsite_place", "Porto", None, "Lisbon")),
    ("The standup is at 10:00 rather than 9:30.", ("Orbit", "standup_time", "10:00", None, "9:30")),
    ("Sorry, I meant the standup is at 10:00, not 9:30.", ("Orbit", "standup_time", "10:00", None, "9:30")),
    ("Sorry, I meant Porto, not Lisbon.", ("Maya", "corrected_value", "Porto", None, "Lisbon")),
    ("It's actually GitLab, not GitHub.", ("Maya", "corrected_value", "GitLab", None, "GitHub")),
    # No wrong value said: the memory takes the current one (CORRECTS_CURRENT)
    ("Correction: the offsite is in Porto.", ("Orbit", "offsite_place", "Porto", None, CORRECTS_CURRENT)),
    ("Sorry, I meant Thursday.", ("Maya", "corrected_value", "Thursday", None, CORRECTS_CURRENT)),
    ("My mistake: we moved the CI to Buildkite.", ("Orbit", "ci_tool", "Buildkite", None, CORRECTS_CURRENT)),
])
def test_corrections_in_every_form(text, expected):
    assert facts(text) == [expected]


def test_actually_alone_is_not_a_correction():
    assert facts("Actually, the offsite is in Porto.") == [("Orbit", "offsite_place", "Porto", None, None)]


def _right(sentence: dict) -> bool:
    team = sentence.get("team", SENTENCES["team"])
    said = datetime.fromisoformat(SENTENCES["said"]).replace(hour=12, tzinfo=UTC)
    got = extract(text=sentence["text"], speaker=SENTENCES["speaker"], occurred_at=said, team=team).facts
    unmatched = list(got)
    for want in sentence["expect"]:
        hit = next((f for f in unmatched if f.subject == want["subject"] and canonical_attribute(f.attribute) == canonical_attribute(want["attribute"])
                    and f.value.casefold() == str(want["value"]).casefold()
                    and ("previous" not in want or (f.previous_value or "").casefold() == want["previous"].casefold())
                    and ("corrects" not in want or (f.corrects or "").casefold() == str(want["corrects"]).casefold())
                    and ("from" not in want or (f.valid_from and f.valid_from.strftime("%Y-%m") == want["from"]))), None)
        if hit is None:
            return False
        unmatched.remove(hit)
    return not unmatched


def test_the_held_out_sentences_stay_at_their_floor():
    """42 of 43 when chosen (the rules before this change: 14; a spaCy dependency prototype: 17).
    The miss: "last year" is read as a year before the day said, not as the calendar year."""
    right = [s["text"] for s in SENTENCES["sentences"] if _right(s)]
    assert len(right) >= 42, sorted({s["text"] for s in SENTENCES["sentences"]} - set(right))


@pytest.mark.django_db
def test_a_later_correction_supersedes_the_offsite_through_the_memory(cast, committed):
    from memories.models import Fact, FactStatus
    from memories.services.ingest import remember

    cast.team_a.name = TEAM
    cast.team_a.save()
    for text, day in [("The team offsite is in Lisbon.", "2026-05-01"), ("Correction: the offsite is in Porto, not Lisbon.", "2026-05-02"),
                      ("We moved our CI from Jenkins to GitHub Actions in January 2025.", "2026-05-03"),
                      ("Sorry, I meant Buildkite.", "2026-05-04")]:
        with committed():
            remember(scope=cast.scope_a, text=text, speaker="maya", actor=cast.p_owner,
                     occurred_at=datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC))
    rows = {(f.attribute, f.value): f for f in Fact.objects.in_scope(cast.scope_a)}
    lisbon, porto = rows[("offsite_place", "Lisbon")], rows[("offsite_place", "Porto")]
    assert (lisbon.status, porto.status, porto.supersedes_id) == (FactStatus.SUPERSEDED, FactStatus.ACTIVE, lisbon.pk)
    assert lisbon.valid_to <= lisbon.valid_from  # corrected: never true
    actions, buildkite = rows[("ci_tool", "GitHub Actions")], rows[("ci_tool", "Buildkite")]
    assert (actions.status, buildkite.status, buildkite.supersedes_id) == (FactStatus.SUPERSEDED, FactStatus.ACTIVE, actions.pk)
    assert rows[("ci_tool", "Jenkins")].status == FactStatus.SUPERSEDED


@pytest.mark.django_db
def test_a_bare_amount_corrects_the_speaker_s_latest_amount_never_a_tool(cast, committed):
    # Fourth pass: "scratch that, 6,400" named no wrong value; the speaker's last episode before it
    # (by the date it speaks of) held only a tool, which the amount must not replace.
    from memories.models import Fact, FactStatus
    from memories.services.ingest import remember

    cast.team_a.name = TEAM
    cast.team_a.save()
    for text, day in [("Our storage is on Wasabi.", "2025-04-14"),
                      ("The Wasabi bill for April was 910 euros. Scratch that, 640, I had the wrong account open.", "2025-05-06")]:
        with committed():
            remember(scope=cast.scope_a, text=text, speaker="maya", actor=cast.p_owner,
                     occurred_at=datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC))
    active = {(f.attribute, f.value) for f in Fact.objects.in_scope(cast.scope_a).filter(status=FactStatus.ACTIVE)}
    assert ("storage_tool", "Wasabi") in active
    assert not any(value == "640" and attribute.endswith("_tool") for attribute, value in active)
