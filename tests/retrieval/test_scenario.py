"""The memory-core scenario, answered (issue 4, point 7)."""

import pytest

from memories.models import Fact
from retrieval.services import answer, history, recall, recall_evidence
from tests.retrieval.conftest import NOW

pytestmark = pytest.mark.django_db


def test_the_scenario_facts_are_there(scenario):
    active = {(f.attribute, f.value) for f in Fact.objects.in_scope(scenario.scope_a).filter(status="active")}
    assert ("lives_in", "New York") in active


def test_where_do_i_live_puts_new_york_first(scenario):
    result = recall(scope=scenario.scope_a, query="Where do I live?", speaker="ankesh", now=NOW)
    top = result.items[0]
    assert top.kind == "fact" and top.attribute == "lives_in" and top.value == "New York"
    # The old home is not an answer to the present tense.
    assert all(not (i.kind == "fact" and i.value == "San Francisco" and i.status == "superseded") for i in result.items)
    reply = answer(scope=scenario.scope_a, question="Where do I live?", speaker="ankesh", now=NOW)
    assert reply.text.startswith("You live in New York (since 20 April 2025")


def test_did_i_ever_live_in_san_francisco_says_yes_with_the_interval(scenario):
    reply = answer(scope=scenario.scope_a, question="Did I ever live in San Francisco?", speaker="ankesh", now=NOW)
    assert reply.text == "Yes: you lived in San Francisco from 2 April 2024 to 20 April 2025."
    result = recall(scope=scenario.scope_a, query="Did I ever live in San Francisco?", speaker="ankesh", now=NOW)
    old = [i for i in result.items if i.kind == "fact" and i.value == "San Francisco"]
    assert old and old[0].status == "superseded" and old[0].valid_to is not None
    assert any("superseded" in why for why in old[0].why)


def test_what_is_my_job_is_senior_engineer_at_google(scenario):
    reply = answer(scope=scenario.scope_a, question="What is my job?", speaker="ankesh", now=NOW)
    assert "senior engineer at Google" in reply.text
    assert reply.text.startswith("You are a senior engineer at Google")


def test_football_invitation_finds_the_football_fact_first(scenario):
    result = recall_evidence(
        scope=scenario.scope_a, query="My friend invited me to play football, should I go?", speaker="ankesh", now=NOW
    )
    top = result.items[0]
    assert top.kind == "fact" and "football" in top.text.lower()


def test_what_changed_in_the_last_3_months_lists_the_superseding_facts(scenario):
    result = recall(scope=scenario.scope_a, query="What changed in the last 3 months?", speaker="ankesh", now=NOW)
    assert result.window is not None and result.window.phrase == "in the last 3 months"
    assert result.window.start.date().isoformat() == "2025-03-01"
    in_window = [i for i in result.items if not any("outside the time window" in w for w in i.why)]
    facts = [i for i in in_window if i.kind == "fact" and i.status == "active"]
    assert facts and facts[0].value == "New York" and facts[0].attribute == "lives_in"
    # Nothing that began before the window ranks as a change.
    assert all(i.valid_from.date().isoformat() >= "2025-03-01" for i in facts)


def test_history_returns_the_whole_chain(scenario):
    chain = history(scope=scenario.scope_a, entity="ankesh", attribute="lives_in")
    assert [(f.value, f.status) for f in chain] == [("San Francisco", "superseded"), ("New York", "active")]
