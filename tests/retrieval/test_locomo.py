"""The LOCOMO harness on a small slice of the dev file: ingest through ingest_session, ask
through recall_evidence, score evidence recall; malformed evidence ids repaired or skipped."""

import json
from collections import Counter

import pytest
from django.core.management import call_command

from memories.models import Scope
from retrieval.eval import format_report, load_locomo, repair_evidence, run_locomo, score_question, summarise

from tests.locomo_slices import sessions_slice, slice_file


def test_malformed_evidence_ids_are_repaired_or_skipped_and_counted():
    known = {"D8:6", "D9:17", "D11:26", "D30:5", "D1:1"}
    defects = Counter()
    assert repair_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D", "D1:1", "D1:1", "D99:1"], known, defects) == [
        "D8:6", "D9:17", "D11:26", "D30:5", "D1:1",
    ]
    assert defects == Counter(
        split_multi_id=1, repaired_format=2, skipped_unreadable=1, skipped_duplicate=1, skipped_missing_turn=1
    )


def test_recall_and_hit_are_computed_per_question_and_averaged():
    assert score_question(["D1:1", "D1:2"], ["D1:2", "D3:3"]) == (0.5, True)
    assert score_question(["D1:1"], ["D2:2"]) == (0.0, False)
    report = summarise(
        [
            {"conversation": "c", "category": 1, "recall": 0.5, "hit": True},
            {"conversation": "c", "category": 1, "recall": 0.0, "hit": False},
            {"conversation": "c", "category": 4, "recall": 1.0, "hit": True},
        ],
        k=10, mode="turns",
    )
    assert report["evidence_recall"] == pytest.approx(0.5) and report["hit_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert report["by_category"]["1"] == {"name": "multi-hop", "questions": 2, "evidence_recall": 0.25, "hit_rate": 0.5}


@pytest.fixture
def dev_slice(tmp_path):
    """conv-30's first two sessions, its questions about them, and two questions with bad ids."""
    sample = sessions_slice(sample_ids=("conv-30",), sessions=("1", "2"))[0]
    conv, qa = sample["conversation"], sample["qa"][:6]
    turns = {t["dia_id"]: t for n in ("1", "2") for t in conv[f"session_{n}"]}
    first, second = list(turns)[3], list(turns)[10]
    # A question that quotes a turn word for word must find it; its ids are written badly on purpose.
    qa.append({"question": turns[first]["text"], "evidence": [first.replace("D", "D:") + "; " + second], "category": 4})
    qa.append({"question": "Unanswerable", "evidence": ["D"], "category": 5})
    path = slice_file(tmp_path, [{**sample, "qa": qa}])
    return path, first, second, len(qa)


@pytest.mark.django_db
def test_the_harness_ingests_asks_and_scores_a_slice(cast, dev_slice, tmp_path):
    path, first, second, asked = dev_slice
    conv = load_locomo(path)[0]
    assert [s for s, _, _ in conv.sessions] == ["session_1", "session_2"]
    out = tmp_path / "results.jsonl"
    report = run_locomo(dataset=path, team=cast.team_a, k=10, mode="turns", out=out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert report["questions"] == len(records) == asked - 1  # the bare "D" question has no evidence left
    assert report["defects"]["repaired_format"] == 1 and report["defects"]["split_multi_id"] == 1
    assert report["defects"]["skipped_question_without_evidence"] == 1
    quoted = next(r for r in records if r["evidence"] == [first, second])
    assert quoted["retrieved"][0] == first  # the turn it quotes comes first
    assert quoted["recall"] == pytest.approx(sum(e in quoted["retrieved"] for e in quoted["evidence"]) / 2)
    for r in records:
        assert len(r["retrieved"]) <= 10
        assert r["recall"] == pytest.approx(len(set(r["evidence"]) & set(r["retrieved"])) / len(r["evidence"]))
        assert r["hit"] == (r["recall"] > 0)
    assert report["evidence_recall"] == pytest.approx(round(sum(r["recall"] for r in records) / len(records), 4))
    assert set(report) >= {"evidence_recall", "hit_rate", "questions", "k", "mode", "by_category"}
    # Every question's recall_evidence is timed as the caller waits for it, embedding included.
    latency = report["latency"]
    assert latency["questions"] == len(records) and 0 < latency["p50_ms"] <= latency["p95_ms"]
    assert {"bm25", "vector", "embed", "total"} <= set(latency["p50_ms_by_stage"])
    assert latency["p50_ms_by_stage"]["total"] <= latency["p95_ms"]
    assert f"p50 {latency['p50_ms']} ms, p95 {latency['p95_ms']} ms" in format_report(report)
    assert not Scope.objects.filter(slug__startswith="eval-").exists()  # the throwaway scope is gone


@pytest.mark.django_db
def test_eval_locomo_command_prints_json(cast, dev_slice, capsys):
    path, *_ = dev_slice
    call_command("eval", "locomo", "--dataset", str(path), "--k", "5", "--json", "--as", "owner")
    report = json.loads(capsys.readouterr().out)
    assert report["k"] == 5 and report["mode"] == "turns" and report["questions"] > 0
    assert all(set(row) >= {"questions", "evidence_recall", "hit_rate"} for row in report["by_category"].values())
