"""z-score fusion (retrieval/ranking.py) and the cross-validation that chooses the fusion
(retrieval/cv.py, `memoryweb eval locomo --cv`)."""

import json

import pytest
from django.core.management import call_command

from memories.models import Scope
from retrieval.cv import Candidate, candidate_choose, cv_report, format_cv_report
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


def _asked(conversation: str, recalls: list[float]) -> list[dict]:
    return [{"conversation": conversation, "category": 1, "recall": r, "hit": r > 0} for r in recalls]


_DEFAULT, _OTHER = Candidate("default", {"RETRIEVAL_RRF_K": 10.0}), Candidate("other", {"RETRIEVAL_FUSION": "zscore"})


def test_a_candidate_better_on_one_question_of_twenty_does_not_replace_the_default():
    default = [1.0] * 10 + [0.0] * 10
    other = default[:]
    other[12] = 1.0  # one question more found, the rest the same
    records = {"default": _asked("c1", default), "other": _asked("c1", other)}
    chosen, best, error = candidate_choose(records, candidates=(_DEFAULT, _OTHER), tuned_on=["c1"])
    assert best is _OTHER and chosen is _DEFAULT
    # Differences [0 … 1 … 0]: mean 1/20, sample variance 1/20, error sqrt(1/20 / 20) = 1/20,
    # the whole lead: one question is never more than chance.
    assert error == pytest.approx(1 / 20)


def test_a_candidate_better_on_two_questions_and_worse_on_none_replaces_the_default():
    default = [1.0] * 10 + [0.0] * 10
    other = [1.0] * 12 + [0.0] * 8
    records = {"default": _asked("c1", default), "other": _asked("c1", other)}
    chosen, best, error = candidate_choose(records, candidates=(_DEFAULT, _OTHER), tuned_on=["c1"])
    assert chosen is best is _OTHER and error < 2 / 20


def test_wins_and_losses_that_cancel_out_keep_the_default():
    default = [1.0] * 10 + [0.0] * 10
    other = [0.0] * 3 + [1.0] * 7 + [1.0] * 5 + [0.0] * 5  # three lost, five won: two net, much noise
    records = {"default": _asked("c1", default), "other": _asked("c1", other)}
    chosen, best, error = candidate_choose(records, candidates=(_DEFAULT, _OTHER), tuned_on=["c1"])
    assert best is _OTHER and chosen is _DEFAULT and error > 2 / 20


def test_the_error_of_the_difference_pairs_the_questions_and_averages_the_conversations():
    # c1: the other loses one question of four; c2: identical. Paired differences on c1 are
    # [1, 0, 0, 0]: mean 1/4, sample variance 1/4, error of the mean sqrt(1/16); halved by
    # averaging two conversations, as the figure is.
    records = {"default": _asked("c1", [1, 1, 0, 0]) + _asked("c2", [1, 0]), "other": _asked("c1", [0, 1, 0, 0]) + _asked("c2", [1, 0])}
    chosen, best, error = candidate_choose(records, candidates=(_OTHER, _DEFAULT), tuned_on=["c1", "c2"])
    assert best is _DEFAULT and error == pytest.approx(0.25 / 2)
    assert chosen is _OTHER  # 1/8 below the best: within one error, and listed first


def test_the_report_says_when_the_choice_is_not_the_best():
    records = {"default": _asked("c1", [1.0] * 10 + [0.0] * 10) + _asked("c2", [1.0, 0.0]),
               "other": _asked("c1", [1.0] * 11 + [0.0] * 9) + _asked("c2", [1.0, 1.0])}
    report = cv_report(records, names=["c1", "c2"], candidates=(_DEFAULT, _OTHER), k=10, mode="turns")
    fold = {f["held_out"]: f for f in report["folds"]}["c2"]
    assert (fold["chosen"], fold["best"], fold["best_recall"], fold["tuned_recall"]) == ("default", "other", 0.55, 0.5)
    assert "chose default on c1 (0.500, within one standard error (0.050) of other 0.550); there 0.500" in format_cv_report(report)


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
