"""A fact answers a question only when they qualify its head word alike (stop 37): "where do the NA game
servers run?" is not answered by eu_game_server_tool (the question says "NA", the fact "EU", neither the
other's), while the team said as "team" or "our" is no other qualifier than the team's name. Offline
extraction, stored through `remember`, asked through `answer`."""

import pytest

from memories.models import Fact
from retrieval.answer import answer
from tests.memories.test_replacement_history import at, say  # noqa: F401  (`say` is a fixture)

pytestmark = pytest.mark.django_db


def test_a_fact_qualified_otherwise_does_not_answer(say):
    say("EU game servers run on GKE in europe-west1 (Belgium), NA ones in the Montréal region", "2023-06-27")
    assert Fact.objects.in_scope(say.scope).filter(attribute="eu_game_server_tool", value="GKE").exists()
    said = answer(scope=say.scope, question="Where do the NA game servers run?", now=at("2024-01-01")).text
    assert "eu game server" not in said.splitlines()[0] and "Montréal" in said  # the sentence that says it is quoted, not the EU fact
    said = answer(scope=say.scope, question="What do the EU game servers run on?", now=at("2024-01-01")).text
    assert said.splitlines()[0].endswith("GKE (since 27 June 2023).")


def test_the_team_said_as_team_is_no_other_qualifier(say):
    say("The first Kestrel offsite will be in Antwerp, 18 to 20 April.", "2024-02-19")
    say("Correction: the offsite is in Bruges, not Antwerp. The dates stay the same.", "2024-02-21")
    said = answer(scope=say.scope, question="Where did we go for our first team retreat?", now=at("2024-06-01")).text
    assert said.splitlines()[0] == "Kestrel: first kestrel offsite place: Bruges (since 19 February 2024)."  # not the quote that says Antwerp
