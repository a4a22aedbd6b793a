"""The learned order of an evidence search's head (retrieval/rerank.py, RETRIEVAL_RERANK) and its
fitting and measuring leaving one conversation out (`memoryweb eval rerank`, retrieval/rerank_eval.py)."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
from django.core.management import call_command

from memories.models import Scope
from retrieval import rerank
from retrieval.fulltext import Hit
from retrieval.rerank import FEATURES, Model, features, head_reranked, model_fit, shipped_model, traced
from retrieval.search import recall_evidence
from tests.retrieval.test_cv import five_conversations  # noqa: F401 (a fixture)
from tests.retrieval.test_head_rules import _session

_SAID = [
    ("Ann", "Your quilt looks lovely."), ("Bo", "Thanks, it took all winter."),
    ("Ann", "What gave you the idea for the colours of the quilt?"),
    ("Bo", "My grandmother's garden in Provence, lavender and sunflowers."),
    ("Ann", "Did the quilt take long?"), ("Bo", "It was a long winter of quilting."),
    ("Ann", "Shall we meet on Friday?"), ("Bo", "Sure."),
]
QUESTION = "What did Bo say about the quilt?"


def _asks_first() -> Model:
    """A model that puts the turns that ask a question first, whatever else the lists say."""
    weights = np.zeros(len(FEATURES) + 1)
    weights[FEATURES.index("asks")] = 10.0
    return Model(np.zeros(len(FEATURES)), np.ones(len(FEATURES)), weights)


def _turns(scope, *, rerank_on: bool, settings) -> list:
    settings.RETRIEVAL_RERANK = rerank_on
    return recall_evidence(scope=scope, query=QUESTION, k=8, filters={"kinds": ["turn"]}).items


def test_the_shipped_model_is_fitted_on_these_features():
    model = shipped_model()
    assert model is not None, "retrieval/rerank.json is missing or fitted on other features"
    assert len(model.weights) == len(FEATURES) + 1 and len(model.mean) == len(model.scale) == len(FEATURES)
    data = json.loads(rerank.WEIGHTS.read_text())
    assert sorted(data["conversations"]) == ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]


@pytest.mark.django_db(transaction=True)
def test_the_head_s_turns_are_put_in_the_model_s_order(cast, settings, monkeypatch):
    _session(cast.scope_a, cast.p_owner, _SAID)
    before = _turns(cast.scope_a, rerank_on=False, settings=settings)
    monkeypatch.setattr(rerank, "shipped_model", _asks_first)
    monkeypatch.setattr("retrieval.search.pipeline.shipped_model", _asks_first)
    after = _turns(cast.scope_a, rerank_on=True, settings=settings)
    assert {i.pk for i in after} == {i.pk for i in before}  # the same turns, another order
    asking = [i for i in after if i.text.endswith("?")]
    assert asking and [i.text.endswith("?") for i in after[: len(asking)]] == [True] * len(asking)
    assert [i.pk for i in before] != [i.pk for i in after]
    moved = [i for i in after if any("by the learned order" in why for why in i.why)]
    assert moved and all(before.index(next(b for b in before if b.pk == i.pk)) != after.index(i) for i in moved)
    # Off, the pipeline's order again.
    assert [i.pk for i in _turns(cast.scope_a, rerank_on=False, settings=settings)] == [i.pk for i in before]


@pytest.mark.django_db(transaction=True)
def test_a_scope_searched_through_its_graphs_keeps_the_pipeline_s_order(cast, settings, monkeypatch):
    _session(cast.scope_a, cast.p_owner, _SAID)
    monkeypatch.setattr("retrieval.search.pipeline.shipped_model", _asks_first)
    monkeypatch.setattr("retrieval.search.candidates.vector_search_exact", lambda **kwargs: False)
    assert [i.pk for i in _turns(cast.scope_a, rerank_on=True, settings=settings)] == [
        i.pk for i in _turns(cast.scope_a, rerank_on=False, settings=settings)]


def _item(pk: int, kind: str = "turn", text: str = "said", speaker: str = "Ann", before: int | None = None, after: int | None = None):
    return SimpleNamespace(pk=pk, kind=kind, text=text, speaker=speaker, previous_turn=before,
                           next_turn=(after, "Bo") if after else None, why=[])


def test_facts_keep_their_places_and_a_trace_keeps_the_order():
    items = [_item(1, text="fine."), _item(7, kind="fact"), _item(2, text="why?"), _item(3, text="ok.")]
    found = SimpleNamespace(bm25={"turn": [Hit("turn", 3, 2.0), Hit("turn", 1, 1.0)]}, vectors={}, speakers={})
    out = head_reranked(items, found, question="why", model=_asks_first())
    assert [(i.kind, i.pk) for i in out] == [("turn", 2), ("fact", 7), ("turn", 1), ("turn", 3)]
    with traced() as trace:
        assert head_reranked(items, found, question="why", model=_asks_first()) == items
    (pks, x), = trace
    assert pks == [1, 2, 3] and x.shape == (3, len(FEATURES))
    assert head_reranked(items, found, question="why", model=None) == items


def test_features_read_each_list_s_place_and_score_and_the_neighbours_votes():
    lists = {name: {} for name in rerank.LISTS}
    lists["bm25 turn"] = {5: (0, 4.0), 6: (1, 2.0)}
    lists["vector turn"] = {6: (0, 0.8)}
    x = features(question="what did ann say", turns=[_item(5, after=6), _item(6, text="really?", speaker="Bo", before=5)], lists=lists)
    row5, row6 = (dict(zip(FEATURES, row)) for row in x)
    assert row5["vote bm25 turn"] == pytest.approx(1 / 11) and row6["vote bm25 turn"] == pytest.approx(1 / 12)
    assert row6["score bm25 turn"] == pytest.approx(0.5) and row6["score vector turn"] == pytest.approx(1.0)
    assert row5["vote of the turn after"] == pytest.approx(row6["vote"]) == pytest.approx(1 / 12 + 1 / 11)
    assert row6["vote of the turn before"] == pytest.approx(row5["vote"]) and row5["vote of the turn before"] == 0.0
    assert (row5["speaker named"], row6["speaker named"], row5["asks"], row6["asks"]) == (1.0, 0.0, 0.0, 1.0)
    assert (row5["place"], row6["place"]) == (pytest.approx(1 / 11), pytest.approx(1 / 12))


def test_the_fit_learns_which_feature_tells_the_evidence():
    rng = np.random.default_rng(3)
    x = rng.random((400, len(FEATURES)))
    y = (x[:, FEATURES.index("asks")] > 0.7).astype(float)
    model = model_fit(x, y, l2=1.0)
    assert int(np.argmax(np.abs(model.weights[:-1]))) == FEATURES.index("asks")
    assert (model.scores(x) > 0).astype(float).mean() == pytest.approx(y.mean(), abs=0.05)


@pytest.mark.django_db
def test_eval_rerank_leaves_each_conversation_out_and_writes_the_weights(cast, five_conversations, capsys, tmp_path):  # noqa: F811
    dev, tune = five_conversations
    written = tmp_path / "rerank.json"
    call_command("eval", "rerank", "--dataset", str(dev), "--dataset", str(tune), "--questions", "4", "--write", str(written),
                 "--json", "--as", "owner")
    report = json.loads(capsys.readouterr().out)
    assert [f["held_out"] for f in report["folds"]] == ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    assert report["questions"] == report["pipeline"]["questions"] == report["learned"]["questions"] == 20
    assert all(f["l2"] in (1.0, 10.0, 100.0) for f in report["folds"])
    data = json.loads(written.read_text())
    assert data["features"] == list(FEATURES) and data["questions"] == 20 and len(data["weights"]) == len(FEATURES) + 1
    assert not Scope.objects.filter(slug__startswith="eval-").exists()


@pytest.mark.django_db
def test_eval_rerank_refuses_one_conversation_and_a_bad_count(cast, five_conversations):  # noqa: F811
    from django.core.management.base import CommandError

    dev, _ = five_conversations
    with pytest.raises(CommandError, match="at least two conversations"):
        call_command("eval", "rerank", "--dataset", str(dev), "--conversations", "conv-26", "--questions", "2", "--as", "owner")
    with pytest.raises(CommandError, match="at least 1"):
        call_command("eval", "rerank", "--dataset", str(dev), "--questions", "0", "--as", "owner")
    with pytest.raises(CommandError, match="Cannot write the weights"):  # refused before any conversation is read
        call_command("eval", "rerank", "--dataset", str(dev), "--write", "/no/such/folder/rerank.json", "--as", "owner")
    assert not Scope.objects.filter(slug__startswith="eval-").exists()
