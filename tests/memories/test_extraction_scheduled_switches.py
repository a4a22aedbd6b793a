"""A team's switch of tool in more of chat's shapes, and one announced for a day ahead (stop 47): "the zapp contract
is up, we're going to tillpoint", "we're leaving brightline", "swiftbin are taking over", "plannr is replacing taskly",
"moving off keyvault to passbolt"; "paging is moving from Beepr to Alertly on 1 July", said in June, is the new tool
from 1 July (the store keeps a tool's day ahead, `extract.SCHEDULED_AHEAD`; any other state begins when said at the
latest). Sentences of our own, in lowercase chat and capitalised."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline import extract
from memories.models import Fact, FactStatus
from retrieval.answer import answer
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

SAID = datetime(2026, 6, 15, 12, tzinfo=UTC)


def switches(text: str, *, said: datetime = SAID):
    return [(f.value, f.previous_value) for f in extract(text=text, speaker="maya", occurred_at=said, team="Orbit").facts
            if f.previous_value]


@pytest.mark.parametrize("text, new, old", [
    # a contract that ends, and the new one said in another clause
    ("card readers: the zapp contract is up, we're going to tillpoint.", "Tillpoint", "Zapp"),
    ("waste: the Kestrel contract is ending, Swiftbin are taking over", "Swiftbin", "Kestrel"),
    ("cleaning: glimmo's contract isn't being renewed, shinewell take over in april", "Shinewell", "Glimmo"),
    # leaving one, the other said as ours
    ("HR: we're leaving brightline. carrowhr is our HR advice service from now on", "Carrowhr", "Brightline"),
    # replacing, and moving off one to another
    ("plannr is replacing taskly!! training next week", "Plannr", "Taskly"),
    ("passwords: we're moving off keyvault to passbolt.", "Passbolt", "Keyvault"),
    # an everyday word as the new tool's name, the old one a name no dictionary holds
    ("the rota is moving from shiftly to harbour.", "Harbour", "Shiftly"),
])
def test_a_switch_said_in_chats_shapes_names_both_tools(text, new, old):
    assert (new, old) in switches(text)


@pytest.mark.parametrize("text", [
    "we're thinking of moving paging to alertly at some point",  # a wish
    "paging is moving to alertly soon",  # ahead, with no day said
    "the printer contract is up for renewal next month, any views?",  # no new tool
])
def test_a_plan_with_no_day_or_a_wish_is_no_switch(text):
    assert switches(text) == []


def test_a_switch_announced_for_a_day_ahead_begins_on_that_day():
    fact = next(f for f in extract(text="paging is moving from Beepr to Alertly on 1 July", speaker="maya", occurred_at=SAID,
                                   team="Orbit").facts if f.value == "Alertly")
    assert (fact.previous_value, fact.valid_from.date().isoformat()) == ("Beepr", "2026-07-01")


@pytest.mark.django_db
def test_through_the_memory_the_new_tool_holds_from_the_day_announced_and_the_old_one_until_then(say):
    say("maya", "Paging goes through Beepr.", "2026-01-05")
    say("maya", "paging is moving from Beepr to Alertly on 1 July", "2026-06-15")
    rows = {f.value: f for f in Fact.objects.in_scope(say.cast.scope_a).filter(attribute="on_call_tool")}
    assert rows["Alertly"].status == FactStatus.ACTIVE and rows["Alertly"].valid_from.date().isoformat() == "2026-07-01"
    assert rows["Beepr"].status == FactStatus.SUPERSEDED and rows["Beepr"].valid_to.date().isoformat() == "2026-07-01"
    now = datetime(2026, 12, 1, tzinfo=UTC)
    assert answer(scope=say.cast.scope_a, question="What did we use for paging in June 2026?", now=now).text.split("\n")[0].count("Beepr")
    when = answer(scope=say.cast.scope_a, question="When did paging move to Alertly?", now=now).text
    assert "1 July 2026" in when  # the day said, not "July 2026" (the first of a month is otherwise read as the month)
    both = answer(scope=say.cast.scope_a, question="On what date did paging switch from Beepr to Alertly?", now=now).text
    assert both.startswith("After Beepr:") and "Alertly (1 July 2026 to now)" in both


@pytest.mark.django_db
def test_a_state_other_than_a_tool_still_begins_when_said(say):
    say("maya", "Board's decided: no more Friday issue from July", "2026-06-02")
    decision = Fact.objects.in_scope(say.cast.scope_a).get(attribute="decision")
    assert decision.valid_from.date().isoformat() == "2026-06-02"
