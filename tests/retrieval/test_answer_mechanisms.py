"""Fifth pass (issue 24, points 2 and 4): a correction that names no wrong value corrects the most
recent fact of the thing its words name, whoever said that fact; a question asked in another name
of a thing (an abbreviation, a synonym, another spelling) finds the fact said in the first."""

import pytest

from memories.models import Fact, FactStatus
from retrieval.answer import answer
from tests.retrieval.test_answer_span import NOW, say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

pytestmark = pytest.mark.django_db


def first_line(say, question, **kwargs):
    return answer(scope=say.cast.scope_a, question=question, now=NOW, **kwargs).text.split("\n")[0]


@pytest.mark.parametrize("correction", [
    "Actually it's 21 May for the billing revamp.",
    "Update on the billing revamp: legal needs a week, so it's actually 21 May.",
    "Sorry, I should have said 21 May for the billing revamp.",
])
def test_a_correction_from_someone_else_corrects_the_thing_its_words_name(say, correction):
    say("maya", "We decided to ship the billing revamp on 14 May.", "2026-02-09")
    say("maya", "Our chat tool is Slack.", "2026-02-10")
    say("tomasz", correction, "2026-03-02")
    held = Fact.objects.in_scope(say.cast.scope_a).filter(attribute="billing_revamp_date")
    assert [(f.value, f.status) for f in held.order_by("id")] == [("14 May 2026", FactStatus.SUPERSEDED), ("21 May 2026", FactStatus.ACTIVE)]
    assert Fact.objects.in_scope(say.cast.scope_a).get(attribute="chat_tool").value == "Slack"


def test_a_venue_corrected_by_another_speaker(say):
    say("maya", "The 2026 kickoff will be at Hotel Arena in Oslo on 15 January.", "2025-11-11")
    say("maya", "We use Figma for design.", "2025-11-12")
    say("tomasz", "Update on the kickoff: Hotel Arena double-booked us, so it's actually at De Kroon.", "2025-11-18")
    assert "De Kroon" in first_line(say, "Where is the 2026 kickoff?")


@pytest.mark.parametrize("statement, question, value", [
    ("Our data warehouse is Snowflake.", "What's our DWH?", "Snowflake"),
    ("We use Pulumi for all the infra.", "What's our IaC tool?", "Pulumi"),
    ("Our dashboards are in Metabase.", "Which BI tool do we use?", "Metabase"),
    ("Our monitoring is Honeycomb.", "What do we use for observability?", "Honeycomb"),
    ("We use Cypress for end-to-end tests.", "What do we use for e2e testing?", "Cypress"),
    ("Secrets live in HashiCorp Vault.", "What do we use for secrets management?", "HashiCorp Vault"),
    ("We standardised on Ruff for linting.", "What did we standardize on for linting?", "Ruff"),
])
def test_a_question_in_another_name_of_the_thing_finds_its_fact(say, statement, question, value):
    say("maya", statement, "2026-02-02")
    assert value in first_line(say, question)


def test_a_corrected_venue_keeps_its_town(say):
    say("maya", "The 2026 kickoff will be at Hotel Arena in Oslo on 15 January.", "2025-11-11")
    say("tomasz", "Update on the kickoff: Hotel Arena double-booked us, so it's actually at De Kroon.", "2025-11-18")
    assert Fact.objects.in_scope(say.cast.scope_a).get(attribute="2026_kickoff_place", status=FactStatus.ACTIVE).value == "De Kroon, Oslo"


def test_when_something_ended_is_not_answered_by_its_start(say):
    say("maya", "The deploy freeze starts next Monday and runs until 5 January.", "2025-12-03")
    reply = first_line(say, "When did the deploy freeze end?")
    assert "8 December" not in reply


def test_a_paging_question_finds_the_on_call_tool(say):
    say("maya", "We switched on-call from Opsgenie to incident.io this month.", "2025-10-13")
    assert "incident.io" in first_line(say, "What's our paging tool?")


@pytest.mark.parametrize("correction", ["Scratch that, the 3rd, finance moved it.", "Sorry, I meant the 3rd."])
def test_an_ordinal_correction_replaces_the_part_of_its_shape(say, correction):
    say("ayo", "Invoice runs happen on the 1st of each month.", "2026-02-23")
    say("ayo", correction, "2026-02-24")
    assert Fact.objects.in_scope(say.cast.scope_a).get(attribute="invoice_runs", status=FactStatus.ACTIVE).value == "on the 3rd of each month"
