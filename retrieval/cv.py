"""`memoryweb eval locomo --cv`: choose retrieval settings by cross-validation on LOCOMO.

Every question is asked under every candidate setting (`CANDIDATES`). Then, leaving one
conversation out at a time, a setting is chosen by its evidence recall@k on the others (below)
and measured on the one left out: the figure for a conversation nobody tuned on. With the two
dev conversations that is "tune on conv-26, measure on conv-30" and the reverse. Reported per
held-out conversation and category, beside every setting's own figures.

A setting acts at one of three stages, and each stage is paid for once per distinct value:
- indexing (`INDEX_SETTINGS`: what a turn's vector is made from): the conversation is ingested
  and indexed, through the real path, into a throwaway scope per distinct indexing setting;
- the candidate lists (the question's vector, `RETRIEVAL_DENSE_QUERY`): the questions are
  embedded, and their lists gathered (`candidates_memo`), once per distinct list setting;
- fusion (`FUSION_SETTINGS`): re-fused from the same lists.

Few candidates on purpose: each one more is one more chance to fit the noise of two
conversations. And a candidate that beats the default by less than the noise does not replace
it (`candidate_choose`): the first candidate in order (the current default first) within one
standard error of the best is chosen, the error of their difference question by question
(the one-standard-error rule, Breiman et al. 1984; Hastie, Tibshirani & Friedman, The Elements
of Statistical Learning, 7.10). On two conversations three questions' worth of recall is within
it; a setting better on many questions is not.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from itertools import product
from pathlib import Path

from django.test.utils import override_settings

from accounts.models import Team
from memoryweb.errors import InvalidInput
from memoryweb.progress import no_progress
from memoryweb.providers.embedders import get_embedder
from retrieval.eval import (
    MODES, conversation_ingest, conversation_scope, drop_scope, evidence_ids, load_locomo, score_question, summarise,
)
from retrieval.indexing import index_pending
from retrieval.search import recall_evidence
from retrieval.search.candidates import candidates_memo
from retrieval.search.question import dense_text, scope_speakers


@dataclass(frozen=True)
class Candidate:
    name: str
    settings: dict


INDEX_SETTINGS = frozenset({"RETRIEVAL_TURN_VECTOR_TEXT", "RETRIEVAL_WINDOW_VECTORS"})
FUSION_SETTINGS = frozenset({"RETRIEVAL_FUSION", "RETRIEVAL_RRF_K"})

_VECTOR_TEXTS = {"said": {"RETRIEVAL_TURN_VECTOR_TEXT": "said"}, "doc": {"RETRIEVAL_TURN_VECTOR_TEXT": "document"}}
_DENSE_QUERIES = {"unnamed": {"RETRIEVAL_DENSE_QUERY": "unnamed"}, "asked": {"RETRIEVAL_DENSE_QUERY": "asked"}}
_FUSIONS = {"rrf10": {"RETRIEVAL_FUSION": "rrf", "RETRIEVAL_RRF_K": 10.0}, "zscore": {"RETRIEVAL_FUSION": "zscore"}}

# The defaults first (ties keep them): turns' vectors of what was said, the question's without
# the speakers' names, RRF k 10. Then every combination of the three choices against it (the
# vector of a turn's whole document, of the question as asked, z-score fusion), and RRF's
# constant at 5, 20 and the paper's 60 with the default lists.
CANDIDATES = tuple(
    Candidate(f"{v}/{d}/{f}", {**_VECTOR_TEXTS[v], **_DENSE_QUERIES[d], **_FUSIONS[f]})
    for v, d, f in product(_VECTOR_TEXTS, _DENSE_QUERIES, _FUSIONS)
) + tuple(
    Candidate(f"said/unnamed/rrf{k}", {**_VECTOR_TEXTS["said"], **_DENSE_QUERIES["unnamed"], "RETRIEVAL_FUSION": "rrf",
                                       "RETRIEVAL_RRF_K": float(k)})
    for k in (5, 20, 60)
)


def _stage(candidate: Candidate, names: frozenset) -> tuple:
    return tuple(sorted((k, v) for k, v in candidate.settings.items() if k in names))


def _list_stage(candidate: Candidate) -> tuple:
    return tuple(sorted((k, v) for k, v in candidate.settings.items() if k not in INDEX_SETTINGS | FUSION_SETTINGS))


def cross_validate(
    *, dataset: str | Path, team: Team, conversations: list[str] | None = None, k: int = 10, mode: str = "turns",
    candidates: tuple[Candidate, ...] = CANDIDATES, progress: Callable[..., None] | None = None,
) -> dict:
    """Leave-one-conversation-out choice among `candidates` (see the module doc); the report."""
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}.")
    convs = load_locomo(dataset, only=conversations)
    if len(convs) < 2:
        raise InvalidInput("Cross-validation needs at least two conversations.")
    progress = progress or no_progress
    embedder = get_embedder()
    records: dict[str, list[dict]] = {c.name: [] for c in candidates}
    index_stages = list(dict.fromkeys(_stage(c, INDEX_SETTINGS) for c in candidates))
    for number, conv in enumerate(convs, start=1):
        now = conv.sessions[-1][1] + timedelta(days=1)
        for stage_number, index_stage in enumerate(index_stages, start=1):
            label = f"{conv.sample_id} ({number}/{len(convs)})" + (f" index {stage_number}/{len(index_stages)}" if len(index_stages) > 1 else "")
            scope = conversation_scope(team=team, conv=conv)
            try:
                with override_settings(**dict(index_stage)):
                    conversation_ingest(scope=scope, conv=conv, enqueue=mode != "turns", progress=progress, where=label)
                    progress(0, conv.turn_count, f"{label} index turns")
                    index_pending(scope=scope)
                    progress(conv.turn_count, conv.turn_count, f"{label} index turns")
                staged = [c for c in candidates if _stage(c, INDEX_SETTINGS) == index_stage]
                for list_stage in dict.fromkeys(_list_stage(c) for c in staged):
                    group = [c for c in staged if _list_stage(c) == list_stage]
                    with override_settings(**dict(index_stage), **dict(list_stage)):
                        speakers = scope_speakers(scope)
                        vectors = embedder.embed([dense_text(text=q.text, speakers=speakers) for q in conv.questions])
                    with candidates_memo():
                        for done, candidate in enumerate(group):
                            progress(done, len(group), f"{label} questions by setting")
                            with override_settings(**candidate.settings):
                                for question, vector in zip(conv.questions, vectors):
                                    result = recall_evidence(scope=scope, query=question.text, k=k, filters={"kinds": list(MODES[mode])},
                                                             now=now, query_vector=vector)
                                    recall_value, hit = score_question(question.evidence, evidence_ids(result.items))
                                    records[candidate.name].append({"conversation": conv.sample_id, "category": question.category,
                                                                    "recall": recall_value, "hit": hit})
                        progress(len(group), len(group), f"{label} questions by setting")
            finally:
                drop_scope(scope)
    return cv_report(records, names=[c.sample_id for c in convs], candidates=candidates, k=k, mode=mode)


def cv_report(records: dict[str, list[dict]], *, names: list[str], candidates: tuple[Candidate, ...], k: int, mode: str) -> dict:
    """Every candidate's figures, and per held-out conversation the candidate chosen on the
    others (`candidate_choose`) with its figures there, beside the best there and the error."""
    per_candidate = {name: summarise(rows, k=k, mode=mode) for name, rows in records.items()}
    folds = []
    for held_out in names:
        tuned_on = [n for n in names if n != held_out]
        chosen, best, error = candidate_choose(records, candidates=candidates, tuned_on=tuned_on)
        held = summarise([r for r in records[chosen.name] if r["conversation"] == held_out], k=k, mode=mode)
        folds.append({
            "held_out": held_out, "tuned_on": tuned_on, "chosen": chosen.name, "settings": chosen.settings,
            "tuned_recall": round(_tuned(records[chosen.name], tuned_on), 4), "best": best.name,
            "best_recall": round(_tuned(records[best.name], tuned_on), 4), "standard_error": round(error, 4),
            "evidence_recall": held["evidence_recall"], "hit_rate": held["hit_rate"],
            "questions": held["questions"], "by_category": held["by_category"],
        })
    asked = sum(f["questions"] for f in folds)
    return {
        "k": k, "mode": mode, "candidates": {c.name: c.settings for c in candidates},
        "per_candidate": {
            name: {"evidence_recall": r["evidence_recall"], "by_conversation": r["by_conversation"], "by_category": r["by_category"]}
            for name, r in per_candidate.items()
        },
        "folds": folds,
        "cv_evidence_recall": round(sum(f["evidence_recall"] * f["questions"] for f in folds) / asked, 4) if asked else 0.0,
    }


def candidate_choose(
    records: dict[str, list[dict]], *, candidates: tuple[Candidate, ...], tuned_on: list[str],
) -> tuple[Candidate, Candidate, float]:
    """(chosen, best, the standard error that separated them) on the `tuned_on` conversations.

    A candidate's figure there is the mean of the conversations' mean recalls (each weighs alike).
    The chosen one is the first candidate whose figure is below the best's by at most one
    standard error of the difference: the best's and its recalls subtracted question by
    question (both answered the same questions, so what they agree on is no noise), that
    mean's error per conversation, combined as the figure combines the means. So with the
    default first, another setting replaces it only when it is better by more than chance."""
    best = max(candidates, key=lambda c: _tuned(records[c.name], tuned_on))  # max keeps the first of equals
    top = _tuned(records[best.name], tuned_on)
    for candidate in candidates:
        error = _difference_error(records[best.name], records[candidate.name], tuned_on)
        # "At most": a lead of one question is exactly one error (see the tests); 1e-12 for rounding.
        if top - _tuned(records[candidate.name], tuned_on) <= error + 1e-12:
            return candidate, best, error
    return best, best, 0.0  # not reached: the best is within zero of itself


def _tuned(rows: list[dict], tuned_on: list[str]) -> float:
    means = []
    for name in tuned_on:
        recalls = [r["recall"] for r in rows if r["conversation"] == name]
        means.append(sum(recalls) / len(recalls) if recalls else 0.0)
    return sum(means) / len(means)


def _difference_error(best: list[dict], other: list[dict], tuned_on: list[str]) -> float:
    """The standard error of `_tuned(best) - _tuned(other)`: per conversation, the paired
    question-by-question differences (the rows of a conversation come in question order for
    every candidate), their sample variance over their count, averaged as the means are."""
    variance = 0.0
    for name in tuned_on:
        a = [r["recall"] for r in best if r["conversation"] == name]
        b = [r["recall"] for r in other if r["conversation"] == name]
        differences = [x - y for x, y in zip(a, b)]
        n = len(differences)
        if n > 1:
            mean = sum(differences) / n
            variance += sum((d - mean) ** 2 for d in differences) / (n - 1) / n
    return math.sqrt(variance) / len(tuned_on)


def format_cv_report(report: dict) -> str:
    lines = [f"LOCOMO cross-validation, mode {report['mode']}, top {report['k']}: evidence recall per setting"]
    names = list(next(iter(report["per_candidate"].values()))["by_conversation"])
    lines.append(f"{'setting':<22}" + "".join(f"{n:>10}" for n in names) + f"{'all':>10}")
    for name, row in report["per_candidate"].items():
        lines.append(f"{name:<22}" + "".join(f"{row['by_conversation'][n]['evidence_recall']:>10.3f}" for n in names)
                     + f"{row['evidence_recall']:>10.3f}")
    for fold in report["folds"]:
        against = "" if fold["best"] == fold["chosen"] else (
            f", within one standard error ({fold['standard_error']:.3f}) of {fold['best']} {fold['best_recall']:.3f}")
        lines.append(f"held out {fold['held_out']}: chose {fold['chosen']} on {', '.join(fold['tuned_on'])}"
                     f" ({fold['tuned_recall']:.3f}{against}); there {fold['evidence_recall']:.3f}")
        for category, row in fold["by_category"].items():
            lines.append(f"  {category + ' ' + row['name']:<16}{row['questions']:>6}{row['evidence_recall']:>10.3f}")
    lines.append(f"cross-validated evidence recall: {report['cv_evidence_recall']:.3f}")
    return "\n".join(lines)
