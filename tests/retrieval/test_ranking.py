"""RRF, lanes, recency and the importance floor on fixed inputs; temporal parsing with a fixed now."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from retrieval.ranking import best_first, lane_score, pool_size, recency, rrf
from retrieval.temporal import parse_time

NOW = datetime(2025, 6, 15, 12, 0, tzinfo=UTC)


def test_rrf_sums_reciprocal_ranks_with_k():
    scores = rrf([["a", "b", "c"], ["b", "a"], ["c"]], k=60)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["a"] == pytest.approx(scores["b"]) and scores["b"] > scores["c"]


def test_rrf_counts_an_item_once_per_list_and_honours_weights():
    assert rrf([["a", "a", "b"]], k=10) == {"a": pytest.approx(1 / 11), "b": pytest.approx(1 / 13)}
    weighted = rrf([["a"], ["b"]], k=10, weights=[2.0, 1.0])
    assert weighted["a"] == pytest.approx(2 / 11) and weighted["b"] == pytest.approx(1 / 11)


def test_lane_score_is_the_weighted_sum():
    weights = {"similarity": 0.65, "importance": 0.30, "recency": 0.05}
    assert lane_score(similarity=0.8, importance=0.4, recency_value=0.5, weights=weights) == pytest.approx(0.65 * 0.8 + 0.3 * 0.4 + 0.05 * 0.5)
    # An unscored row (raw turn) counts as neutral importance 0.5.
    assert lane_score(similarity=1.0, importance=None, recency_value=1.0, weights=weights) == pytest.approx(0.65 + 0.15 + 0.05)


def test_recency_halves_every_half_life():
    assert recency(NOW, now=NOW) == pytest.approx(1.0)
    assert recency(NOW - timedelta(days=365), now=NOW) == pytest.approx(0.5)
    assert recency(NOW - timedelta(days=730), now=NOW) == pytest.approx(0.25)
    assert recency(None, now=NOW) == 0.0


def test_important_memories_do_not_decay():
    old = NOW - timedelta(days=3650)
    assert recency(old, now=NOW, importance=0.75) == 1.0
    assert recency(old, now=NOW, importance=0.9) == 1.0
    assert recency(old, now=NOW, importance=0.74) == pytest.approx(0.5**10)


def test_pool_is_two_percent_clamped(settings):
    settings.RETRIEVAL_POOL_MIN, settings.RETRIEVAL_POOL_MAX, settings.RETRIEVAL_POOL_FRACTION = 50, 500, 0.02
    assert pool_size(100) == 50
    assert pool_size(10_000) == 200
    assert pool_size(1_000_000) == 500


def d(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    "text,start,end,phrase",
    [
        ("What changed in the last 3 months?", d(2025, 3, 15, 12), NOW, "in the last 3 months"),
        ("what did I do in the past two weeks", d(2025, 6, 1, 12), NOW, "in the past two weeks"),
        ("anything from 2024?", d(2024, 1, 1), d(2025, 1, 1), "2024"),
        ("what happened in 2024", d(2024, 1, 1), d(2025, 1, 1), "in 2024"),
        ("notes from March 2025", d(2025, 3, 1), d(2025, 4, 1), "March 2025"),
        ("what did I say yesterday", d(2025, 6, 14), d(2025, 6, 15), "yesterday"),
        ("what changed since last summer", d(2024, 6, 1), NOW, "since last summer"),
        ("last week's meetings", d(2025, 6, 2), d(2025, 6, 9), "last week"),
        ("everything this year", d(2025, 1, 1), d(2026, 1, 1), "this year"),
        ("last month", d(2025, 5, 1), d(2025, 6, 1), "last month"),
        ("since March", d(2025, 3, 1), NOW, "since March"),
        ("in August", d(2024, 8, 1), d(2024, 9, 1), "in August"),
        ("what happened in march", d(2025, 3, 1), d(2025, 4, 1), "in march"),
        ("plans for September", d(2024, 9, 1), d(2024, 10, 1), "September"),
        ("the pride march in June", d(2025, 6, 1), d(2025, 7, 1), "in June"),
        ("before March 2025", None, d(2025, 3, 1), "before March 2025"),
        ("after 2023", d(2024, 1, 1), None, "after 2023"),
        ("on October 13, 2023", d(2023, 10, 13), d(2023, 10, 14), "October 13, 2023"),
        ("on 1 February, 2023", d(2023, 2, 1), d(2023, 2, 2), "1 February, 2023"),
        ("met on 2024-03-05", d(2024, 3, 5), d(2024, 3, 6), "2024-03-05"),
        ("last winter", d(2024, 12, 1), d(2025, 3, 1), "last winter"),
    ],
)
def test_temporal_phrases_become_windows(text, start, end, phrase):
    window = parse_time(text, now=NOW)
    assert window is not None
    assert (window.start, window.end, window.phrase) == (start, end, phrase)


@pytest.mark.parametrize(
    "text", ["Where do I live?", "What are your plans for the summer?", "May I ask something?", "How long ago was her 18th birthday?",
             "Did Caroline join the pride march?", "What did Jan say about the move?", "Who came to the dec party?",
             "Which march did they organise?"]
)
def test_phrases_without_a_time_give_no_window(text):
    assert parse_time(text, now=NOW) is None


def test_before_i_moved_is_an_anchor_resolved_against_the_memory():
    from retrieval.temporal import resolve_anchor

    window = parse_time("Where did I work before I moved?", now=NOW)
    assert window.anchor == "moved:before"
    assert resolve_anchor(window, moved_at=None) is None  # nothing moved: no filter
    resolved = resolve_anchor(window, moved_at=d(2025, 4, 20))
    assert (resolved.start, resolved.end) == (None, d(2025, 4, 20))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8])
def test_best_first_is_a_full_sort_s_first_n_with_ties_cut_by_id(n):
    # four rows tied at 2.0 across the cut: which of them make the list is decided by id, never by the partition
    scores = np.array([2.0, 1.0, 3.0, 2.0, 2.0, 0.5, 2.0], dtype=np.float32)
    ids = np.array([70, 10, 50, 20, 60, 30, 40])
    full = sorted(range(len(scores)), key=lambda i: (-scores[i], ids[i]))[:n]
    assert best_first(scores, ids, n).tolist() == full
