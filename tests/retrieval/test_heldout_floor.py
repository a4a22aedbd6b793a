"""The held-out answers floor (issue 24, point 3): heldout-a.yaml, written blind before the
extraction and answer changes it measures and never tuned on, answered offline. The issue's target
is 90 %; this asserts the floor reached, so that a change that loses held-out answers fails here:
122 of 174 here (the tests' hash embedder; `memoryweb eval scenarios` with the local model gives
123 = 0.707), from 108 = 0.621 before the change. The development set
heldout-b.yaml (tuned on) has its own floor: 68 of 68 since the second pass of issue 24 (53 before),
which says only that what was tuned holds. Through recorded model replies: not done (there are
no recordings for these suites' 223 statements)."""

from pathlib import Path

import pytest

from retrieval.eval import run_scenarios

pytestmark = pytest.mark.django_db
SCENARIOS = Path(__file__).parents[2] / "retrieval" / "scenarios"
TARGET = 0.90  # the issue's; not reached offline


@pytest.mark.parametrize("suite, right, questions", [("heldout-a.yaml", 122, 174), ("heldout-b.yaml", 68, 68)])
def test_the_held_out_suites_answer_at_their_floor_offline(cast, suite, right, questions):
    report = run_scenarios(owner=cast.owner, path=SCENARIOS / suite)
    assert report["provider"] == "offline" and report["failed_extractions"] == 0 and report["questions"] == questions
    assert report["right"] >= right, [w["question"] for w in report["wrong"]]
    if suite == "heldout-a.yaml":
        assert right / questions < TARGET  # when the target is reached, raise the floor to it
