"""z-score fusion (retrieval/ranking.py) and the cross-validation that chooses the fusion
(retrieval/cv.py, `memoryweb eval locomo --cv`)."""

import json

import pytest
from django.core.management import call_command

from memories.models import Scope
from retrieval.cv import Candidate, cv_report
from retrieval.ranking import fuse, zscore
from tests.locomo_slices import sessions_slice, slice_file


def test_zscore_sums_each_lists_standardised_scores_shifted_to_its_worst():
    scores = zscore([["a", "b", "c"], ["c", "d"]], [[3.0, 2.0, 1.0], [0.9, 0.1]])
    spread_one = (2 / 3) ** 0.5  # the population deviation of 3, 2, 1
    assert scores["a"] == pytest.approx(2 / spread_one)
    assert scores["b"] == pytest.approx(1 / spread_one)
    assert scores["c"] == pytest.approx(0 + 0.8 / 0.4)  # last of the first list, first of the second
    assert scores["d"] == 0.0


def test_zscore_scores_a_list_without_scores_by_rank_and_counts_an_item_once():
    assert zscore([["a", "b", "a"]], [None]) == pytest.approx({"a": 1 / 3 / (1 / 6), "b": 0.0})
    assert zscore([["x", "x"]], [[5.0, 1.0]]) == {"x": 0.0}  # a one-item list says nothing


def test_fuse_follows_the_setting(settings):
    lists, values = [["a", "b", "c"], ["b", "a", "c"]], [[10.0, 1.0, 0.9], [0.6, 0.5, 0.4]]
    settings.RETRIEVAL_FUSION = "rrf"
    rrf = fuse(lists, values)
    assert rrf["a"] == pytest.approx(rrf["b"])  # ranks only: a tie
    settings.RETRIEVAL_FUSION = "zscore"
    assert fuse(lists, values)["a"] > fuse(lists, values)["b"]  # a's lead in the first list is far wider


def test_each_conversation_is_measured_with_the_setting_chosen_on_the_others():
    def rows(conversation, recall, n=4):
        return [{"conversation": conversation, "category": 4, "recall": recall, "hit": recall > 0}] * n

    records = {"a": rows("c1", 0.9) + rows("c2", 0.5), "b": rows("c1", 0.6) + rows("c2", 0.7)}
    candidates = (Candidate("a", {"RETRIEVAL_RRF_K": 10.0}), Candidate("b", {"RETRIEVAL_FUSION": "zscore"}))
    report = cv_report(records, names=["c1", "c2"], candidates=candidates, k=10, mode="turns")
    folds = {f["held_out"]: f for f in report["folds"]}
    assert folds["c2"]["chosen"] == "a" and folds["c2"]["evidence_recall"] == 0.5  # a was best on c1, and not on c2
    assert folds["c1"]["chosen"] == "b" and folds["c1"]["evidence_recall"] == 0.6
    assert report["cv_evidence_recall"] == pytest.approx(0.55)
    assert folds["c1"]["by_category"]["4"]["questions"] == 4


@pytest.fixture
def two_conversations(tmp_path):
    """The first session of each dev conversation, with the questions about it."""
    return slice_file(tmp_path, sessions_slice(sample_ids=None, sessions=("1",)), "two.json")


@pytest.mark.django_db
def test_eval_locomo_cv_prints_both_folds(cast, two_conversations, capsys):
    call_command("eval", "locomo", "--cv", "--dataset", str(two_conversations), "--json", "--as", "owner")
    report = json.loads(capsys.readouterr().out)
    assert [f["held_out"] for f in report["folds"]] == ["conv-26", "conv-30"]
    assert {f["chosen"] for f in report["folds"]} <= set(report["candidates"])
    for fold in report["folds"]:
        row = report["per_candidate"][fold["chosen"]]["by_conversation"][fold["held_out"]]
        assert fold["evidence_recall"] == row["evidence_recall"] and fold["questions"] > 0
    assert not Scope.objects.filter(slug__startswith="eval-").exists()
