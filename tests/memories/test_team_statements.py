"""Team statements and corrections (issue 12, points 1 and 2): "we" in a team's scope is the
team, tools by function supersede each other, owners and reporting lines, decisions, schedules
and dates; corrections end the wrong fact with an empty interval. Offline, and through recorded
model replies replayed to the real clients."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from accounts.services import personal_team_ensure
from memories.extraction.vocabulary import canonical_attribute, is_single_subject, is_single_valued
from memories.models import EntityAlias, Fact, Scope
from memories.services.ingest import remember
from tests.replay import replay_server  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db
RECORDINGS = json.loads((Path(__file__).parents[1] / "providers" / "recordings" / "team.json").read_text())["entries"]


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


@pytest.fixture(params=["offline", "ollama", "openai"])
def say(request, cast, committed, replay_server, settings):  # noqa: F811
    """say(speaker, text, day): stored in team-a's scope "alpha" and extracted, offline or by a
    recorded model. The team is named Kestrel (the name the recordings use for "we")."""
    cast.team_a.name = "Kestrel"
    cast.team_a.save()
    if request.param != "offline":
        server = replay_server(ollama=RECORDINGS, openai=RECORDINGS)
        server.configure(settings, request.param)

    def say(speaker: str, text: str, day: str, scope: Scope | None = None):
        with committed():
            remember(scope=scope or cast.scope_a, text=text, speaker=speaker, occurred_at=at(day), actor=cast.p_owner)

    say.cast = cast
    return say


def facts(scope, attribute, **where):
    return [(f.subject.name, f.value, f.status) for f in
            Fact.objects.in_scope(scope).filter(attribute=attribute, **where).select_related("subject").order_by("id")]


def test_we_is_the_team_and_a_vendor_switch_supersedes_the_old_vendor_from_its_date(say):
    scope = say.cast.scope_a
    say("tomasz", "Our payment provider is Stripe.", "2025-01-07")
    say("dana", "We switched the billing service from Stripe to Adyen in March 2025.", "2025-03-03")
    stripe, adyen = Fact.objects.in_scope(scope).filter(attribute="payment_tool").order_by("id")
    assert (stripe.subject.name, stripe.value, stripe.status) == ("Kestrel", "Stripe", "superseded")
    assert (adyen.value, adyen.status, adyen.supersedes_id) == ("Adyen", "active", stripe.pk)
    assert adyen.valid_from.date().isoformat() == "2025-03-01" and stripe.valid_to == adyen.valid_from
    assert adyen.subject.kind == "organization"
    aliases = set(EntityAlias.objects.in_scope(scope).filter(entity=adyen.subject).values_list("normalized", flat=True))
    assert {"kestrel", "we", "us", "our"} <= aliases  # questions saying "we" find the team


def test_a_tool_for_a_function_and_a_replacement(say):
    scope = say.cast.scope_a
    say("tomasz", "We use Linear for tickets.", "2025-01-08")
    say("tomasz", "We switched tickets from Linear to Jira in May 2026.", "2026-05-04")
    assert facts(scope, "ticket_tool") == [("Kestrel", "Linear", "superseded"), ("Kestrel", "Jira", "active")]
    say("tomasz", "Our on-call tool is PagerDuty.", "2025-02-04")
    say("dana", "We replaced PagerDuty with Opsgenie for on-call.", "2026-03-16")
    assert facts(scope, "on_call_tool") == [("Kestrel", "PagerDuty", "superseded"), ("Kestrel", "Opsgenie", "active")]


def test_ownership_reporting_and_leading(say):
    scope = say.cast.scope_a
    say("tomasz", "Dana owns the billing service.", "2025-01-14")
    say("maya", "I report to Tomasz.", "2025-01-15")
    say("tomasz", "I lead the platform team.", "2025-01-06")
    say("maya", "Maya reports to Priya now.", "2026-03-02")
    say("priya", "I lead the platform team now.", "2026-03-02")
    say("tomasz", "Maya owns the billing service now.", "2026-07-06")
    assert facts(scope, "reports_to") == [("maya", "Tomasz", "superseded"), ("maya", "Priya", "active")]
    # One owner per service, one lead per team: the new holder ends the old holder's fact.
    assert facts(scope, "owns") == [("Dana", "billing service", "superseded"), ("maya", "billing service", "active")]
    assert facts(scope, "leads") == [("tomasz", "platform team", "superseded"), ("Priya", "platform team", "active")]  # named first by maya


def test_decisions_schedules_and_dates(say):
    scope = say.cast.scope_a
    say("tomasz", "We decided to keep Postgres for the queue.", "2025-02-17")
    say("tomasz", "The staging password rotates every Friday.", "2025-04-01")
    say("sam", "The launch is on 12 May.", "2026-03-09")
    say("sam", "The launch moved to 2 June.", "2026-04-20")
    assert facts(scope, "decision") == [("Kestrel", "keep Postgres for the queue", "active")]
    assert facts(scope, "staging_password_schedule") == [("Kestrel", "every Friday", "active")]
    assert facts(scope, "launch_date") == [("Kestrel", "12 May 2026", "superseded"), ("Kestrel", "2 June 2026", "active")]


@pytest.mark.parametrize("first, correction, attribute, wrong, right", [
    (("ada", "I moved from Lisbon to Berlin.", "2025-09-01"), ("ada", "Correction: I moved to Munich, not Berlin.", "2025-09-08"),
     "lives_in", "Berlin", "Munich"),
    (("dana", "I live in Valencia.", "2025-01-13"), ("dana", "Actually, it's Seville, not Valencia.", "2025-03-12"),
     "lives_in", "Valencia", "Seville"),
    (("ada", "My manager is Priya.", "2025-01-10"), ("ada", "No, my manager is Marco, not Priya.", "2025-01-10"),
     "reports_to", "Priya", "Marco"),
])
def test_a_correction_supersedes_the_wrong_fact_with_an_empty_interval(say, first, correction, attribute, wrong, right):
    scope = say.cast.scope_a
    say(*first)
    before = Fact.objects.in_scope(scope).get(attribute=attribute, value=wrong)
    say(*correction)
    bad = Fact.objects.in_scope(scope).get(pk=before.pk)
    good = Fact.objects.in_scope(scope).get(attribute=attribute, value=right)
    assert bad.status == "superseded" and bad.valid_to == bad.valid_from  # never true
    assert good.status == "active" and good.supersedes_id == bad.pk and good.valid_from == bad.valid_from


def test_the_issue_s_own_correction_sentences_offline(cast, committed):
    """'Actually, it's Porto, not Lisbon' and 'No — my manager is Marco, not Priya' (em dash)."""
    for text, day in [("I live in Lisbon.", "2025-01-01"), ("My manager is Priya.", "2025-01-01"),
                      ("Actually, it's Porto, not Lisbon.", "2025-02-01"), ("No — my manager is Marco, not Priya.", "2025-02-01")]:
        with committed():
            remember(scope=cast.scope_a, text=text, speaker="ada", occurred_at=at(day), actor=cast.p_owner)
    active = {(f.attribute, f.value) for f in Fact.objects.in_scope(cast.scope_a).filter(status="active")}
    assert active == {("lives_in", "Porto"), ("reports_to", "Marco")}


def test_a_correction_of_nothing_known_adds_nothing_wrong(cast, committed):
    with committed():
        remember(scope=cast.scope_a, text="Actually, it's Porto, not Lisbon.", speaker="ada", occurred_at=at("2025-01-01"),
                 actor=cast.p_owner)
    assert not Fact.objects.in_scope(cast.scope_a).exists()


def test_in_a_personal_scope_we_is_still_the_speaker_and_team_rules_stay_quiet(cast, committed):
    scope = Scope.objects.create(team=personal_team_ensure(user=cast.owner), slug="owner-notes", name="Notes")
    for text in ["We relocated to Austin.", "We use Linear for tickets.", "I run every morning.", "I report to Tomasz."]:
        with committed():
            remember(scope=scope, text=text, speaker="ankesh", occurred_at=at("2025-01-01"), actor=cast.p_owner)
    assert {(f.subject.name, f.attribute, f.value) for f in Fact.objects.in_scope(scope)} == {
        ("ankesh", "lives_in", "Austin"), ("ankesh", "reports_to", "Tomasz"),
    }


def test_the_vocabulary_knows_the_team_attributes():
    assert canonical_attribute("payment_provider") == canonical_attribute("billing_service") == "payment_tool"
    assert canonical_attribute("error_tracker") == "error_tool" and canonical_attribute("boss") == "reports_to"
    assert canonical_attribute("favourite_editor") == "favorite_editor"
    assert is_single_valued("payment_tool") and is_single_valued("launch_date") and is_single_valued("reports_to")
    assert not is_single_valued("uses") and not is_single_valued("decision") and not is_single_valued("owns")
    assert is_single_subject("owns") and is_single_subject("leads") and not is_single_subject("lives_in")


def test_the_model_is_told_the_team_and_the_team_vocabulary(replay_server, settings, cast, committed):  # noqa: F811
    cast.team_a.name = "Kestrel"
    cast.team_a.save()
    server = replay_server(ollama=RECORDINGS, openai=RECORDINGS)
    server.configure(settings, "ollama")
    with committed():
        remember(scope=cast.scope_a, text="We use Linear for tickets.", speaker="tomasz", occurred_at=at("2025-01-08"), actor=cast.p_owner)
    (body,) = server.chats("/api/chat")
    system, user = body["messages"]
    assert "Team (whom we / us / our mean): Kestrel" in user["content"]
    assert "payment_tool" in system["content"] and "corrects" in system["content"] and "reports_to" in system["content"]
