"""A switch names the old tool in fewer words than it was stored ("from Vault" after "HashiCorp
Vault", "from Statuspage" after "Atlassian Statuspage"): it lands on that tool's attribute and
supersedes it, in the active and the passive voice (the seventh pass). A town said as the old value
is not a place stored with that town ("from Hull" is not "Humber Quays, Hull")."""

import pytest

from memories.models import Fact, FactStatus
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

pytestmark = pytest.mark.django_db


def held(say, attribute):
    return [(f.value, f.status) for f in Fact.objects.in_scope(say.cast.scope_a).filter(attribute=attribute).order_by("id")]


@pytest.mark.parametrize("switch", [
    "secrets have been moved from Vault to AWS Secrets Manager",
    "secrets were moved from Vault to AWS Secrets Manager last week",
    "we moved secrets from Vault to AWS Secrets Manager",
    "secrets moved from Vault to AWS Secrets Manager",
])
def test_a_switch_from_a_tool_said_in_fewer_words_supersedes_it(say, switch):
    say("bilal", "secrets are kept in HashiCorp Vault", "2025-02-10")
    say("bilal", switch, "2025-08-11")
    assert held(say, "secret_tool") == [("HashiCorp Vault", FactStatus.SUPERSEDED), ("AWS Secrets Manager", FactStatus.ACTIVE)]


def test_a_town_is_not_a_place_stored_with_it(say):
    say("aiko", "Acme head office is at Humber Quays in Hull", "2025-01-10")
    say("aiko", "the monthly safety meeting is at the town hall in Hull", "2025-01-11")
    say("aiko", "the monthly safety meeting moves from Hull to Teams", "2025-03-11")
    assert held(say, "acme_head_office_place") == [("Humber Quays, Hull", FactStatus.ACTIVE)]
