"""`memoryweb eval rerank`: the learned order of the head (retrieval/rerank.py) fitted and measured
on LOCOMO conversations, leaving one out at a time.

Each conversation is ingested and indexed once and every question asked once with the re-ranking
traced (the pipeline's order kept, each head's features recorded). Then, for each conversation held
out, the penalty is chosen among L2_CHOICES by leaving each of the other conversations out in turn,
the model fitted on all of them with it, and the held-out conversation's heads put in its order:
the cross-validated figure is what those orders find. `write` fits on every conversation (the
penalty chosen the same way) and writes the weights the pipeline ships with.
"""

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np
from django.test.utils import override_settings

from accounts.models import Team
from memories.models import Turn
from memoryweb.errors import InvalidInput
from memoryweb.progress import no_progress
from retrieval.eval import conversation_indexed, evidence_ids, load_locomo, score_question, summarise
from retrieval.rerank import DEPTH, FEATURES, WEIGHTS, Model, model_fit, traced
from retrieval.search import recall_evidence

L2_CHOICES = (1.0, 10.0, 100.0)
K = 10


@dataclass
class Head:
    conversation: str
    category: int
    evidence: list[str]
    pipeline: list[str]  # the pipeline's top K dialog ids
    turns: list[str]  # the head's turns' dialog ids, in the pipeline's order
    x: np.ndarray  # their features

    def labels(self) -> np.ndarray:
        gold = set(self.evidence)
        return np.asarray([1.0 if turn in gold else 0.0 for turn in self.turns])

    def reordered(self, model: Model) -> list[str]:
        order = np.argsort(-model.scores(self.x), kind="stable") if len(self.turns) else []
        return [self.turns[i] for i in order][:K]


def heads_gather(
    *, dataset, team: Team, conversations: list[str] | None = None, questions: int | None = None,
    progress: Callable[..., None] | None = None,
) -> list[Head]:
    """Every question's head, its features recorded as the pipeline ranks (nothing reordered)."""
    progress = progress or no_progress
    convs = load_locomo(dataset, only=conversations)
    heads: list[Head] = []
    for number, conv in enumerate(convs, start=1):
        where = f"{conv.sample_id} ({number}/{len(convs)})"
        with conversation_indexed(team=team, conv=conv, progress=progress, where=where) as scope:
            dialog = dict(Turn.objects.in_scope(scope).values_list("pk", "external_id"))
            now = conv.sessions[-1][1] + timedelta(days=1)
            asked = conv.questions[:questions] if questions else conv.questions
            for done, question in enumerate(asked):
                with override_settings(RETRIEVAL_RERANK=True), traced() as trace:
                    result = recall_evidence(scope=scope, query=question.text, k=K, filters={"kinds": ["turn"]}, now=now)
                pks, x = trace[0] if trace else ([], np.zeros((0, len(FEATURES))))
                heads.append(Head(conv.sample_id, question.category, question.evidence, evidence_ids(result.items),
                                  [dialog[pk] for pk in pks], x))
                progress(done + 1, len(asked), f"{where} questions")
    return heads


def _fit(heads: list[Head], l2: float) -> Model:
    usable = [h for h in heads if len(h.turns)]
    if not usable:
        raise InvalidInput("No question of these conversations found any turn to learn from.")
    return model_fit(np.vstack([h.x for h in usable]), np.concatenate([h.labels() for h in usable]), l2=l2)


def _recall(heads: list[Head], model: Model) -> float:
    return sum(score_question(h.evidence, h.reordered(model))[0] for h in heads) / max(len(heads), 1)


def penalty_choose(heads: list[Head]) -> float:
    """The L2 penalty that finds the most leaving each conversation of `heads` out in turn (the
    smallest among ties)."""
    names = sorted({h.conversation for h in heads})
    if len(names) < 2:
        return L2_CHOICES[len(L2_CHOICES) // 2]
    found = {}
    for l2 in L2_CHOICES:
        found[l2] = sum(
            _recall([h for h in heads if h.conversation == held], _fit([h for h in heads if h.conversation != held], l2))
            * sum(1 for h in heads if h.conversation == held)
            for held in names
        )
    return max(L2_CHOICES, key=lambda l2: (found[l2], -l2))


def rerank_cross_validate(heads: list[Head]) -> dict:
    """Leave one conversation out: the held-out heads in the order of a model fitted without them
    (its penalty chosen without them too), against the pipeline's order; per conversation and category."""
    names = sorted({h.conversation for h in heads})
    if len(names) < 2:
        raise InvalidInput("eval rerank needs at least two conversations.")
    pipeline, learned, folds = [], [], []
    for held in names:
        tuning = [h for h in heads if h.conversation != held]
        l2 = penalty_choose(tuning)
        model = _fit(tuning, l2)
        out = [h for h in heads if h.conversation == held]
        before = [_record(h, h.pipeline) for h in out]
        after = [_record(h, h.reordered(model)) for h in out]
        pipeline += before
        learned += after
        folds.append({"held_out": held, "l2": l2, "pipeline": summarise(before, k=K, mode="turns")["evidence_recall"],
                      "learned": summarise(after, k=K, mode="turns")["evidence_recall"],
                      "error": round(_paired_error(before, after), 4)})
    return {
        "questions": len(heads), "depth": DEPTH, "folds": folds,
        "pipeline": summarise(pipeline, k=K, mode="turns"), "learned": summarise(learned, k=K, mode="turns"),
        "error": round(_paired_error(pipeline, learned), 4),
    }


def _record(head: Head, retrieved: list[str]) -> dict:
    recall, hit = score_question(head.evidence, retrieved)
    return {"conversation": head.conversation, "category": head.category, "recall": recall, "hit": hit}


def _paired_error(before: list[dict], after: list[dict]) -> float:
    """The standard error of the mean per-question difference."""
    d = np.asarray([a["recall"] - b["recall"] for a, b in zip(before, after)])
    return float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else 0.0


def weights_path_check(path: str | Path) -> Path:
    """`path` if the weights can be written there (its folder exists, it is not a folder), checked
    before the conversations are read rather than after."""
    path = Path(path)
    if path.is_dir() or not path.parent.is_dir():
        raise InvalidInput(f"Cannot write the weights to {path}: give a file in an existing folder.")
    return path


def rerank_write(heads: list[Head], path: str | Path = WEIGHTS) -> dict:
    """Fit on every head (the penalty chosen leaving each conversation out) and write the weights."""
    path = weights_path_check(path)
    l2 = penalty_choose(heads)
    model = _fit(heads, l2)
    data = {**model.as_dict(), "l2": l2, "depth": DEPTH, "questions": len(heads),
            "conversations": sorted({h.conversation for h in heads})}
    try:
        path.write_text(json.dumps(data, indent=1) + "\n")
    except OSError as error:
        raise InvalidInput(f"Cannot write the weights to {path}: {error.strerror}.") from error
    return data


def format_rerank_report(report: dict) -> str:
    lines = [f"learned order of the head ({report['depth']} deep), leaving one conversation out; {report['questions']} questions"]
    lines.append(f"{'held out':10s} {'l2':>6s} {'pipeline':>9s} {'learned':>8s} {'± error':>8s}")
    for fold in report["folds"]:
        lines.append(f"{fold['held_out']:10s} {fold['l2']:6.0f} {fold['pipeline']:9.3f} {fold['learned']:8.3f} {fold['error']:8.3f}")
    lines.append("by category (pipeline → learned):")
    for category, figures in report["learned"]["by_category"].items():
        before = report["pipeline"]["by_category"][category]
        lines.append(f"  {category}: {before['evidence_recall']:.3f} → {figures['evidence_recall']:.3f} ({figures['questions']})")
    lines.append(f"cross-validated evidence recall: {report['pipeline']['evidence_recall']:.4f} → "
                 f"{report['learned']['evidence_recall']:.4f} (± {report['error']:.4f})")
    if "written" in report:
        lines.append(f"written: {report['written']} (l2 {report['l2']}, fitted on {report['fitted_questions']} questions)")
    return "\n".join(lines)
