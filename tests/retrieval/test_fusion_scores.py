"""candidates_fuse hands the lists' own scores to the fusion only where it reads them: zscore
fuses the scores (a list with one document far ahead speaks louder), RRF the ranks alone; and an
item says why it ranks down to _WHY_DEPTH, with its list's note."""

from types import SimpleNamespace

import pytest
from django.test import override_settings

from retrieval.fulltext import Hit
from retrieval.ranking import rrf, zscore
from retrieval.search.candidates import Candidates
from retrieval.search.fusion import _WHY_DEPTH, candidates_fuse

QUESTION = SimpleNamespace(changes=False, kinds=("turn",))
LISTS = {"turn": [Hit("turn", 1, 9.0), Hit("turn", 2, 1.0), Hit("turn", 3, 0.5)],
         "turn_w1": [Hit("turn_w1", 3, 2.0), Hit("turn_w1", 2, 1.9), Hit("turn_w1", 1, 1.8)]}


def fused(fusion: str):
    with override_settings(RETRIEVAL_FUSION=fusion):
        return candidates_fuse(Candidates(bm25=LISTS), q=QUESTION, pool=10, evidence=True)


def test_zscore_fuses_the_lists_own_scores():
    keys = [[("turn", h.target_id) for h in hits] for _, hits in sorted(LISTS.items())]
    values = [[h.score for h in hits] for _, hits in sorted(LISTS.items())]
    assert fused("zscore").scores == pytest.approx(zscore(keys, values))


def test_rrf_fuses_the_ranks_alone():
    keys = [[("turn", h.target_id) for h in hits] for _, hits in sorted(LISTS.items())]
    assert fused("rrf").scores == pytest.approx(rrf(keys))


def test_an_item_says_why_down_to_the_depth_with_its_note():
    hits = [Hit("turn", pk, 100.0 - pk) for pk in range(1, _WHY_DEPTH + 20)]
    with override_settings(RETRIEVAL_FUSION="rrf"):
        out = candidates_fuse(Candidates(bm25={"turn": hits}), q=QUESTION, pool=100, evidence=True)
    assert out.why[("turn", _WHY_DEPTH)] == [f"bm25 turn #{_WHY_DEPTH} ({100.0 - _WHY_DEPTH:.2f})"]
    assert ("turn", _WHY_DEPTH + 1) not in out.why
