"""A switch that names no function ("we ditched Premiere for DaVinci Resolve") is stored on `uses` when
no fact holds the old tool; the old one then becomes history, so "what did we use before DaVinci
Resolve?" has its answer (stop 37). When the team's `uses` holds the old tool, that fact ends where the
new one begins. Offline extraction, stored through `remember`."""

from datetime import UTC, datetime

import pytest

from memories.models import Fact, FactStatus
from memories.services.ingest import remember
from retrieval.answer import answer

pytestmark = pytest.mark.django_db


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


@pytest.fixture
def say(cast, django_capture_on_commit_callbacks):
    """say(text, day): said by Dana in team Kestrel's scope "alpha", extracted offline as a commit would run it."""
    cast.team_a.name = "Kestrel"
    cast.team_a.save()

    def say(text: str, day: str):
        with django_capture_on_commit_callbacks(execute=True):
            remember(scope=cast.scope_a, text=text, speaker="dana", occurred_at=at(day), actor=cast.p_owner)

    say.scope = cast.scope_a
    return say


def uses(scope):
    return [(f.value, f.status, f.valid_to.date() if f.valid_to else None) for f in
            Fact.objects.in_scope(scope).filter(attribute="uses").order_by("id")]


def test_a_replacement_with_nothing_known_keeps_the_old_tool_as_history(say):
    say("Ditched Premiere for DaVinci Resolve on the video side.", "2025-11-10")
    assert sorted(uses(say.scope)) == [("DaVinci Resolve", FactStatus.ACTIVE, None), ("Premiere", FactStatus.SUPERSEDED, datetime(2025, 11, 10).date())]
    new = Fact.objects.in_scope(say.scope).get(attribute="uses", value="DaVinci Resolve")
    assert new.supersedes is not None and new.supersedes.value == "Premiere"
    said = answer(scope=say.scope, question="What did we edit video in before DaVinci Resolve?", now=at("2026-01-01")).text
    assert "Premiere" in said.splitlines()[0]


def test_a_replacement_of_a_tool_the_team_uses_ends_that_fact(say):
    say("We're on Slack now.", "2024-01-08")
    say("The company has switched us to Teams. Slack gets turned off Friday.", "2025-01-15")
    assert uses(say.scope) == [("Slack", FactStatus.SUPERSEDED, datetime(2025, 1, 15).date()), ("Teams", FactStatus.ACTIVE, None)]


def test_a_tool_taken_up_beside_others_ends_nothing(say):
    say("We're on Slack now.", "2024-01-08")
    say("We switched to 1Password.", "2024-03-01")
    assert uses(say.scope) == [("Slack", FactStatus.ACTIVE, None), ("1Password", FactStatus.ACTIVE, None)]
