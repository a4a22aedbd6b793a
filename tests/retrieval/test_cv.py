"""z-score fusion (retrieval/ranking.py), the rules the cross-validation judges (time windows,
window lists, speaker boost, possessive speaker) and the cross-validation itself
(retrieval/cv.py, `memoryweb eval locomo --cv`)."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from memories.models import Scope
from memories.services.ingest import ingest_session
from memoryweb.errors import InvalidInput
from retrieval.cv import RULES_OFF, Candidate, candidate_choose, cv_report, fold_groups, format_cv_report, rules_judged
from retrieval.indexing import index_pending
from retrieval.ranking import fuse, zscore
from retrieval.search import recall_evidence
from retrieval.search.question import named_speaker, question_read
from tests.locomo_slices import TUNE, sessions_slice, slice_file


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


# --- five conversations, grouped folds, the rules judged -----------------------------------------

def test_fold_groups_deal_the_conversations_in_turn():
    names = ["c1", "c2", "c3", "c4", "c5"]
    assert fold_groups(names, None) == [[n] for n in names]
    assert fold_groups(names, 2) == [["c1", "c3", "c5"], ["c2", "c4"]]
    for bad in (1, 6):
        with pytest.raises(InvalidInput):
            fold_groups(names, bad)


def test_a_grouped_fold_is_measured_with_the_setting_best_on_the_other_group_not_on_itself():
    # Rigged: "a" is best on c1 and c3 and worst on c2; "b" the reverse. Held out c2, the choice is
    # made on c1 and c3, so "a" (which c2 alone would never choose) is measured there.
    records = {
        "default": _asked("c1", [0.5] * 4) + _asked("c2", [0.5] * 4) + _asked("c3", [0.5] * 4),
        "a": _asked("c1", [0.9] * 4) + _asked("c2", [0.1] * 4) + _asked("c3", [0.9] * 4),
        "b": _asked("c1", [0.2] * 4) + _asked("c2", [0.8] * 4) + _asked("c3", [0.2] * 4),
    }
    candidates = (Candidate("default", {}), Candidate("a", {"RETRIEVAL_RRF_K": 5.0}), Candidate("b", {"RETRIEVAL_RRF_K": 20.0}))
    report = cv_report(records, names=["c1", "c2", "c3"], candidates=candidates, k=10, mode="turns", groups=[["c1", "c3"], ["c2"]])
    folds = {f["held_out"]: f for f in report["folds"]}
    assert folds["c2"]["chosen"] == "a" and folds["c2"]["tuned_on"] == ["c1", "c3"] and folds["c2"]["evidence_recall"] == 0.1
    assert folds["c1+c3"]["chosen"] == "b" and folds["c1+c3"]["evidence_recall"] == 0.2
    assert report["cv_by_conversation"] == {
        "c1": {"questions": 4, "evidence_recall": 0.2, "hit_rate": 1.0}, "c3": {"questions": 4, "evidence_recall": 0.2, "hit_rate": 1.0},
        "c2": {"questions": 4, "evidence_recall": 0.1, "hit_rate": 1.0},
    }
    assert report["cv_evidence_recall"] == pytest.approx(0.5 / 3, abs=1e-4)  # below every setting's in-sample figure
    assert folds["c2"]["by_candidate"]["b"]["against_default"] == pytest.approx(0.3)
    assert report["chosen_on_all"] == "a"  # (0.9 + 0.1 + 0.9) / 3 beats b's 0.4


def test_a_rule_holds_only_when_it_beats_its_absence_on_the_tuning_conversations_of_every_fold():
    records = {
        # The time rule helps on every conversation; the boost only on c1 (and loses on c2).
        "no time windows": _asked("c1", [0.4] * 4) + _asked("c2", [0.4] * 4),
        "no speaker boost": _asked("c1", [0.3] * 4) + _asked("c2", [0.7] * 4),
        "default": _asked("c1", [0.5] * 4) + _asked("c2", [0.5] * 4),
    }
    candidates = (Candidate("no time windows", {"RETRIEVAL_TIME_WINDOWS": "off"}),
                  Candidate("no speaker boost", {"RETRIEVAL_SPEAKER_BOOST": 0.0}), Candidate("default", {}))
    report = cv_report(records, names=["c1", "c2"], candidates=candidates, k=10, mode="turns")
    rules = report["rules"]
    assert rules["no time windows"]["holds"] is True
    assert [f["held_out_gain"] for f in rules["no time windows"]["folds"]] == [0.1, 0.1]
    boost = {f["held_out"]: f for f in rules["no speaker boost"]["folds"]}
    assert rules["no speaker boost"]["holds"] is False
    assert boost["c2"]["won"] and boost["c2"]["tuned_gain"] == 0.2 and boost["c2"]["held_out_gain"] == -0.2
    assert not boost["c1"]["won"]
    assert rules_judged(records, candidates=candidates[2:], default=candidates[2], folds=report["folds"]) == {}
    assert "no speaker boost: does not hold" in format_cv_report(report)


@pytest.fixture
def five_conversations(tmp_path):
    """The first session of each of the five conversations (two files), with its questions."""
    dev = slice_file(tmp_path, sessions_slice(sample_ids=None, sessions=("1",)), "dev.json")
    tune = slice_file(tmp_path, sessions_slice(sample_ids=None, sessions=("1",), files=(TUNE,)), "tune.json")
    return dev, tune


@pytest.mark.django_db
def test_eval_locomo_cv_over_five_conversations_in_two_folds_chooses_on_the_training_folds(cast, five_conversations, capsys):
    dev, tune = five_conversations
    call_command("eval", "locomo", "--cv", "--dataset", str(dev), "--dataset", str(tune), "--folds", "2", "--questions", "3",
                 "--json", "--as", "owner")
    report = json.loads(capsys.readouterr().out)
    names = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    assert [f["conversations"] for f in report["folds"]] == [["conv-26", "conv-41", "conv-43"], ["conv-30", "conv-42"]]
    assert sorted(report["cv_by_conversation"]) == sorted(names)
    assert all(row["questions"] == 3 for row in report["cv_by_conversation"].values())
    per = report["per_candidate"]
    for fold in report["folds"]:
        assert set(fold["tuned_on"]) == set(names) - set(fold["conversations"])

        def tuned(candidate):  # the figure on the training folds alone, from the report's own table
            return sum(per[candidate]["by_conversation"][n]["evidence_recall"] for n in fold["tuned_on"]) / len(fold["tuned_on"])

        assert tuned(fold["chosen"]) == pytest.approx(fold["tuned_recall"], abs=1e-3)
        assert tuned(fold["best"]) == pytest.approx(max(tuned(c) for c in report["candidates"]), abs=1e-3)
        assert tuned(fold["best"]) - tuned(fold["chosen"]) <= fold["standard_error"] + 1e-3
        held = [per[fold["chosen"]]["by_conversation"][n] for n in fold["conversations"]]
        assert fold["evidence_recall"] == pytest.approx(sum(r["evidence_recall"] for r in held) / len(held), abs=1e-3)
        assert set(fold["by_candidate"]) == set(report["candidates"])
    assert set(report["rules"]) == {c.name for c in RULES_OFF}
    assert all(len(rule["folds"]) == 2 for rule in report["rules"].values())
    assert 0.0 <= report["cv_evidence_recall"] <= 1.0 and report["chosen_on_all"] in report["candidates"]
    assert not Scope.objects.filter(slug__startswith="eval-").exists()


# --- the rules' settings ---------------------------------------------------------------------------

@pytest.mark.django_db
def test_time_words_narrow_the_facts_by_default_everything_under_all_and_nothing_when_off(cast, settings):
    now = datetime(2024, 6, 1, tzinfo=UTC)

    def read(query="What did we decide last month?", **filters):
        return question_read(scope=cast.scope_a, query=query, filters=filters or None, as_of=None,
                             include_history=False, now=now, speaker="", speakers=())

    q = read()
    assert q.window is not None and q.moment_window is None  # facts by when they held; turns not by when said
    assert read(since="2024-01-01").moment_window is not None  # a filter narrows everything
    assert read("What changed last month?").moment_window is not None  # so does "what changed"
    settings.RETRIEVAL_TIME_WINDOWS = "all"
    assert read().moment_window == read().window is not None
    settings.RETRIEVAL_TIME_WINDOWS = "off"
    assert read().window is None
    assert read(since="2024-01-01").window is not None and read("What changed last month?").window is not None


def test_a_possessive_names_the_speaker_only_when_asked_to(settings):
    speakers = ("Caroline", "Melanie")
    assert named_speaker(None, "What are Caroline's kids called?", speakers) == ""
    settings.RETRIEVAL_POSSESSIVE_SPEAKER = True
    assert named_speaker(None, "What are Caroline's kids called?", speakers) == "Caroline"
    assert named_speaker(None, "What did Caroline and Melanie's kids paint?", speakers) == ""  # two named: none


@pytest.mark.django_db(transaction=True)
def test_the_window_radius_picks_the_window_lists_searched(cast, settings):
    start = datetime(2024, 5, 1, 9, tzinfo=UTC)
    said = ["I adopted a puppy called Biscuit", "What breed is she?", "A beagle, she loves the park",
            "Do you walk her daily?", "Twice a day, before work and after dinner"]
    messages = [{"id": f"t{i}", "speaker": "Ann" if i % 2 == 0 else "Bo", "text": text, "occurred_at": start + timedelta(minutes=i)}
                for i, text in enumerate(said)]
    ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=cast.p_owner, enqueue=False)
    index_pending(scope=cast.scope_a)

    def lists(radius: int) -> set[str]:
        settings.RETRIEVAL_WINDOW_RADIUS = radius
        items = recall_evidence(scope=cast.scope_a, query="beagle puppy walks", k=5, filters={"kinds": ["turn"]}).items
        return {why.split(" #")[0] for item in items for why in item.why if " #" in why}

    assert {"bm25 turn_w1", "bm25 turn_w2"} <= lists(2)
    assert "bm25 turn_w1" in lists(1) and not any("turn_w2" in name for name in lists(1))
    assert not any("turn_w" in name for name in lists(0)) and "bm25 turn" in lists(0)
