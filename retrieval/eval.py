"""`memoryweb eval locomo`: evidence retrieval on LOCOMO conversations.

Each conversation goes, session by session, through `ingest_session` into a fresh throwaway
scope (speakers, session dates as `occurred_at`, dialog ids as turn ids, image captions kept in
the text); every question goes through `recall_evidence`; a question's evidence recall is the
fraction of its gold dialog ids among the turns behind the top k items, its hit whether any is.
Reported overall, per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and per conversation. The dataset's malformed evidence ids ("D8:6; D9:17",
"D:11:26", "D30:05", a bare "D", duplicates, ids of turns that do not exist) are repaired when
the intended id is clear and skipped otherwise, and counted.

Modes: `turns` searches the raw turns only (their text and windows) and skips extraction;
`memories` searches the extracted facts only (each stands for the turn it came from); `both`
searches everything. Without an LLM only retrieval is measured.
"""

import json
import re
import sys
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.db import connection, transaction

from accounts.models import Team
from memoryweb.errors import InvalidInput
from memories.models import Scope
from retrieval.indexing import index_pending
from retrieval.search import recall_evidence

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MODES = {"turns": ("turn",), "memories": ("fact",), "both": ("fact", "episode", "turn")}
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass
class Question:
    text: str
    evidence: list[str]
    category: int


@dataclass
class Conversation:
    sample_id: str
    speakers: list[str]
    sessions: list[tuple[str, datetime, list[dict]]]  # (session id, when, messages)
    questions: list[Question]
    defects: Counter = field(default_factory=Counter)

    @property
    def turn_count(self) -> int:
        return sum(len(messages) for _, _, messages in self.sessions)


def parse_session_date(text: str) -> datetime:
    """LOCOMO's "1:56 pm on 8 May, 2023" (UTC: the dataset gives no zone)."""
    cleaned = " ".join(text.replace(",", " ").split())
    for fmt in ("%I:%M %p on %d %B %Y", "%I:%M %p on %d %b %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    import dateparser

    parsed = dateparser.parse(text, languages=["en"], settings={"RETURN_AS_TIMEZONE_AWARE": False})
    if parsed is None:
        raise InvalidInput(f"Unreadable session date {text!r}.")
    return parsed.replace(tzinfo=UTC)


def repair_evidence(raw: list, known: set[str], defects: Counter) -> list[str]:
    """Gold ids as the dataset means them; what cannot be read or does not exist is skipped."""
    out: list[str] = []
    for entry in raw or []:
        parts = [p.strip() for p in re.split(r"[;,\s]+", str(entry)) if p.strip()]
        if len(parts) > 1:
            defects["split_multi_id"] += 1
        for part in parts:
            match = _EVIDENCE.fullmatch(part)
            if not match:
                defects["skipped_unreadable"] += 1
                continue
            fixed = f"D{int(match.group(1))}:{int(match.group(2))}"
            if fixed != part:
                defects["repaired_format"] += 1
            if fixed not in known:
                defects["skipped_missing_turn"] += 1
                continue
            if fixed in out:
                defects["skipped_duplicate"] += 1
                continue
            out.append(fixed)
    return out


def load_locomo(path: str | Path, *, only: list[str] | None = None) -> list[Conversation]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InvalidInput(f"No dataset at {path}.") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc}.") from None
    if not isinstance(data, list):
        raise InvalidInput(f"{path} is not a LOCOMO file (a list of conversations).")
    wanted = set(only or [])
    conversations = []
    for sample in data:
        if wanted and sample.get("sample_id") not in wanted:
            continue
        conversations.append(_conversation(sample))
    missing = wanted - {c.sample_id for c in conversations}
    if missing:
        raise InvalidInput(f"Not in the dataset: {', '.join(sorted(missing))}.")
    return conversations


def _conversation(sample: dict) -> Conversation:
    conv = sample["conversation"]
    numbers = sorted(int(m.group(1)) for key, value in conv.items() if (m := _SESSION.fullmatch(key)) and isinstance(value, list))
    sessions = []
    for number in numbers:
        when = parse_session_date(conv.get(f"session_{number}_date_time", ""))
        messages = []
        for offset, turn in enumerate(conv[f"session_{number}"]):
            text = turn.get("text", "")
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
            # Turns of a session keep their order: one second apart from the session's time.
            messages.append({"id": turn["dia_id"], "speaker": turn.get("speaker", ""), "text": text,
                             "occurred_at": when + timedelta(seconds=offset)})
        sessions.append((f"session_{number}", when, messages))
    known = {m["id"] for _, _, messages in sessions for m in messages}
    defects: Counter = Counter()
    questions = []
    for qa in sample.get("qa", []):
        evidence = repair_evidence(qa.get("evidence", []), known, defects)
        if not evidence:
            defects["skipped_question_without_evidence"] += 1
            continue
        questions.append(Question(text=qa["question"], evidence=evidence, category=int(qa.get("category", 0))))
    speakers = [conv.get("speaker_a", ""), conv.get("speaker_b", "")]
    return Conversation(sample["sample_id"], speakers, sessions, questions, defects)


def evidence_ids(items) -> list[str]:
    """The dialog ids behind ranked items, in order, each once (a fact stands for its turn)."""
    return list(dict.fromkeys(item.source.get("turn") for item in items if item.source.get("turn")))


def score_question(gold: list[str], retrieved: list[str]) -> tuple[float, bool]:
    found = sum(1 for g in gold if g in set(retrieved))
    return found / len(gold), found > 0


class Progress:
    """One rewritten status line on a terminal; silent otherwise."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()

    def show(self, text: str) -> None:
        if self.enabled:
            self.stream.write("\r\033[K" + text)
            self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()


def run_locomo(
    *, dataset: str | Path, team: Team, conversations: list[str] | None = None, k: int = 10, mode: str = "turns",
    out: str | Path | None = None, progress: Progress | None = None,
) -> dict:
    """Ingest, ask, score. Returns the report (see module doc); writes per-question JSONL to `out`."""
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}.")
    if k < 1:
        raise InvalidInput("k must be at least 1.")
    progress = progress or Progress()
    convs = load_locomo(dataset, only=conversations)
    records: list[dict] = []
    defects: Counter = Counter()
    timings: dict[str, dict] = {}
    out_file = open(out, "w") if out else None
    try:
        for number, conv in enumerate(convs, start=1):
            defects.update(conv.defects)
            scope = conversation_scope(team=team, conv=conv)
            try:
                started = time.perf_counter()
                conversation_ingest(scope=scope, conv=conv, enqueue=mode != "turns",
                                    show=lambda text: progress.show(f"{conv.sample_id} ({number}/{len(convs)}): {text}"))
                ingested = time.perf_counter()
                progress.show(f"{conv.sample_id} ({number}/{len(convs)}): indexing {conv.turn_count} turns")
                index_pending(scope=scope)
                indexed = time.perf_counter()
                now = conv.sessions[-1][1] + timedelta(days=1)
                asked = 0
                for question in conv.questions:
                    result = recall_evidence(scope=scope, query=question.text, k=k, filters={"kinds": list(MODES[mode])}, now=now)
                    retrieved = evidence_ids(result.items)
                    recall_value, hit = score_question(question.evidence, retrieved)
                    record = {
                        "conversation": conv.sample_id, "question": question.text, "category": question.category,
                        "evidence": question.evidence, "retrieved": retrieved, "recall": recall_value, "hit": hit,
                        "window": result.window.as_dict() if result.window else None,
                    }
                    records.append(record)
                    if out_file:
                        out_file.write(json.dumps(record) + "\n")
                    asked += 1
                    rate = asked / max(time.perf_counter() - indexed, 1e-9)
                    progress.show(f"{conv.sample_id} ({number}/{len(convs)}): question {asked}/{len(conv.questions)} ({rate:.1f}/s)")
                finished = time.perf_counter()
                timings[conv.sample_id] = {
                    "ingest_s": round(ingested - started, 2), "index_s": round(indexed - ingested, 2),
                    "questions_per_s": round(asked / max(finished - indexed, 1e-9), 2),
                }
            finally:
                drop_scope(scope)
    finally:
        if out_file:
            out_file.close()
        progress.done()
    report = summarise(records, k=k, mode=mode)
    report["defects"] = dict(defects)
    report["timings"] = timings
    return report


def conversation_scope(*, team: Team, conv: Conversation) -> Scope:
    """A throwaway scope for one conversation (drop it with `drop_scope`)."""
    return Scope.objects.create(team=team, slug=f"eval-{conv.sample_id}-{uuid.uuid4().hex[:8]}"[:63], name=f"LOCOMO {conv.sample_id}")


def conversation_ingest(*, scope: Scope, conv: Conversation, enqueue: bool = False, show=lambda text: None) -> None:
    """The conversation's sessions through the real ingest path, in order."""
    from memories.services.ingest import ingest_session

    for index, (session_id, _, messages) in enumerate(conv.sessions, start=1):
        show(f"ingesting session {index}/{len(conv.sessions)}")
        ingest_session(scope=scope, session_id=session_id, messages=messages, actor=None, source="locomo", enqueue=enqueue)


def drop_scope(scope: Scope) -> None:
    """Remove the throwaway scope. Facts go first in one statement: they protect their entities
    and each other (supersedes), which the ORM's collector would refuse to untangle."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories_fact WHERE scope_id = %s", [scope.pk])
        scope.delete()


def summarise(records: list[dict], *, k: int, mode: str) -> dict:
    def stats(rows: list[dict]) -> dict:
        n = len(rows)
        return {
            "questions": n,
            "evidence_recall": round(sum(r["recall"] for r in rows) / n, 4) if n else 0.0,
            "hit_rate": round(sum(1 for r in rows if r["hit"]) / n, 4) if n else 0.0,
        }

    by_category: dict[str, dict] = {}
    grouped = defaultdict(list)
    for r in records:
        grouped[r["category"]].append(r)
    for category in sorted(grouped):
        by_category[str(category)] = {"name": CATEGORIES.get(category, "?"), **stats(grouped[category])}
    by_conversation = defaultdict(list)
    for r in records:
        by_conversation[r["conversation"]].append(r)
    overall = stats(records)
    return {
        "evidence_recall": overall["evidence_recall"], "hit_rate": overall["hit_rate"], "questions": overall["questions"],
        "k": k, "mode": mode, "by_category": by_category,
        "by_conversation": {name: stats(rows) for name, rows in by_conversation.items()},
    }


def format_report(report: dict) -> str:
    lines = [
        f"LOCOMO evidence retrieval, mode {report['mode']}, top {report['k']}",
        f"{'category':<18}{'questions':>10}{'recall':>10}{'hit rate':>10}",
    ]
    for category, row in report["by_category"].items():
        lines.append(f"{category + ' ' + row['name']:<18}{row['questions']:>10}{row['evidence_recall']:>10.3f}{row['hit_rate']:>10.3f}")
    for name, row in report.get("by_conversation", {}).items():
        lines.append(f"{name:<18}{row['questions']:>10}{row['evidence_recall']:>10.3f}{row['hit_rate']:>10.3f}")
    lines.append(f"{'all':<18}{report['questions']:>10}{report['evidence_recall']:>10.3f}{report['hit_rate']:>10.3f}")
    if report.get("defects"):
        lines.append("evidence ids: " + ", ".join(f"{name.replace('_', ' ')} {count}" for name, count in sorted(report["defects"].items())))
    return "\n".join(lines)
