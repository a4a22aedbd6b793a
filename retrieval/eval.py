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
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.db import connection, transaction

from accounts.models import Team
from memoryweb.errors import InvalidInput
from memoryweb.progress import no_progress
from memories.models import Scope
from retrieval.bench import _percentile
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


def load_locomo(path: str | Path | list, *, only: list[str] | None = None) -> list[Conversation]:
    """The conversations of one LOCOMO file or of several (in the order given; a sample id in
    two files is refused), all or those `only` names."""
    paths = [path] if isinstance(path, (str, Path)) else list(path)
    if not paths:
        raise InvalidInput("Give a dataset.")
    wanted = set(only or [])
    conversations: list[Conversation] = []
    for one in paths:
        for sample in _samples(one):
            if wanted and sample.get("sample_id") not in wanted:
                continue
            if any(c.sample_id == sample.get("sample_id") for c in conversations):
                raise InvalidInput(f"{sample.get('sample_id')} is in more than one dataset.")
            conversations.append(_conversation(sample))
    missing = wanted - {c.sample_id for c in conversations}
    if missing:
        raise InvalidInput(f"Not in the dataset: {', '.join(sorted(missing))}.")
    return conversations


def _samples(path: str | Path) -> list[dict]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InvalidInput(f"No dataset at {path}.") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc}.") from None
    if not isinstance(data, list):
        raise InvalidInput(f"{path} is not a LOCOMO file (a list of conversations).")
    return data


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


def run_locomo(
    *, dataset: str | Path | list, team: Team, conversations: list[str] | None = None, k: int = 10, mode: str = "turns",
    out: str | Path | None = None, progress: Callable[..., None] | None = None,
) -> dict:
    """Ingest, ask, score. Returns the report (see module doc); writes per-question JSONL to `out`.
    `progress(done, total, stage)` (memoryweb/progress.py) hears of each session, index and question."""
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}.")
    if k < 1:
        raise InvalidInput("k must be at least 1.")
    progress = progress or no_progress
    convs = load_locomo(dataset, only=conversations)
    records: list[dict] = []
    defects: Counter = Counter()
    timings: dict[str, dict] = {}
    latency = Latency()
    out_file = open(out, "w") if out else None
    try:
        for number, conv in enumerate(convs, start=1):
            defects.update(conv.defects)
            scope = conversation_scope(team=team, conv=conv)
            where = f"{conv.sample_id} ({number}/{len(convs)})"
            try:
                started = time.perf_counter()
                conversation_ingest(scope=scope, conv=conv, enqueue=mode != "turns", progress=progress, where=where)
                ingested = time.perf_counter()
                progress(0, conv.turn_count, f"{where} index turns")
                index_pending(scope=scope)
                progress(conv.turn_count, conv.turn_count, f"{where} index turns")
                indexed = time.perf_counter()
                now = conv.sessions[-1][1] + timedelta(days=1)
                asked = 0
                for question in conv.questions:
                    t0 = time.perf_counter()
                    result = recall_evidence(scope=scope, query=question.text, k=k, filters={"kinds": list(MODES[mode])}, now=now)
                    latency.add(total=time.perf_counter() - t0, stages=result.timings)
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
                    progress(asked, len(conv.questions), f"{where} questions")
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
    report = summarise(records, k=k, mode=mode)
    report["defects"] = dict(defects)
    report["timings"] = timings
    report["latency"] = latency.summary()
    return report


class Latency:
    """Each question's `recall_evidence` wall time as the caller waits for it (the query's
    embedding included) and its stages' times, summarised as p50/p95 in milliseconds."""

    def __init__(self):
        self.totals: list[float] = []
        self.stages: dict[str, list[float]] = defaultdict(list)

    def add(self, *, total: float, stages: dict[str, float]) -> None:
        self.totals.append(total * 1000)
        for stage, seconds in stages.items():
            self.stages[stage].append(seconds * 1000)

    def summary(self) -> dict:
        if not self.totals:
            return {}
        return {
            "questions": len(self.totals), "p50_ms": round(_percentile(self.totals, 0.5), 2),
            "p95_ms": round(_percentile(self.totals, 0.95), 2),
            "p50_ms_by_stage": {stage: round(_percentile(v, 0.5), 2) for stage, v in self.stages.items()},
            "p95_ms_by_stage": {stage: round(_percentile(v, 0.95), 2) for stage, v in self.stages.items()},
        }


def conversation_scope(*, team: Team, conv: Conversation) -> Scope:
    """A throwaway scope for one conversation (drop it with `drop_scope`)."""
    return Scope.objects.create(team=team, slug=f"eval-{conv.sample_id}-{uuid.uuid4().hex[:8]}"[:63], name=f"LOCOMO {conv.sample_id}")


def conversation_ingest(
    *, scope: Scope, conv: Conversation, enqueue: bool = False, progress: Callable[..., None] = no_progress, where: str = "",
) -> None:
    """The conversation's sessions through the real ingest path, in order; `progress` hears of each."""
    from memories.services.ingest import ingest_session

    for index, (session_id, _, messages) in enumerate(conv.sessions, start=1):
        ingest_session(scope=scope, session_id=session_id, messages=messages, actor=None, source="locomo", enqueue=enqueue)
        progress(index, len(conv.sessions), f"{where} ingest sessions".strip())


@contextmanager
def conversation_indexed(
    *, team: Team, conv: Conversation, enqueue: bool = False, progress: Callable[..., None] = no_progress, where: str = "",
) -> Iterator[Scope]:
    """A throwaway scope holding `conv` ingested and indexed, dropped on leaving (`progress` hears
    of each session and of the index run)."""
    scope = conversation_scope(team=team, conv=conv)
    try:
        conversation_ingest(scope=scope, conv=conv, enqueue=enqueue, progress=progress, where=where)
        progress(0, conv.turn_count, f"{where} index turns")
        index_pending(scope=scope)
        progress(conv.turn_count, conv.turn_count, f"{where} index turns")
        yield scope
    finally:
        drop_scope(scope)


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
    if report.get("latency"):
        lat = report["latency"]
        stages = ", ".join(f"{stage} {ms}" for stage, ms in lat["p50_ms_by_stage"].items())
        lines.append(f"recall_evidence latency, query embedding included: p50 {lat['p50_ms']} ms, p95 {lat['p95_ms']} ms"
                     f" over {lat['questions']} questions (p50 by stage, ms: {stages})")
    if report.get("defects"):
        lines.append("evidence ids: " + ", ".join(f"{name.replace('_', ' ')} {count}" for name, count in sorted(report["defects"].items())))
    return "\n".join(lines)


# --- `memoryweb eval scenarios`: what a colleague should answer ----------------------------------

SCENARIOS_DIR = Path(__file__).resolve().parent / "scenarios"
DEFAULT_SCENARIO = SCENARIOS_DIR / "team.yaml"


@dataclass
class ScenarioQuestion:
    text: str
    expect: list[str]
    reject: list[str]
    kind: str
    asker: str = ""


@dataclass
class Scenario:
    team: str
    now: datetime
    statements: list[tuple[datetime, str, str]]  # (said at, speaker, text)
    questions: list[ScenarioQuestion]


def _moment(value, *, what: str) -> datetime:
    from datetime import date

    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, 12, tzinfo=UTC)
    try:
        return _moment(datetime.fromisoformat(str(value)), what=what)
    except ValueError:
        raise InvalidInput(f"{what}: {value!r} is not an ISO date.") from None


def load_scenario(path: str | Path) -> Scenario:
    """A scenario file (YAML): team, now, statements [{at, by, text}], questions [{q, expect,
    reject, kind, as}]. InvalidInput names what is wrong."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise InvalidInput(f"No scenario file at {path}.") from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path} is not YAML: {str(exc).splitlines()[0]}.") from None
    if not isinstance(data, dict) or not isinstance(data.get("statements"), list) or not isinstance(data.get("questions"), list):
        raise InvalidInput(f"{path} is not a scenario file (team, now, statements, questions).")
    statements = []
    for number, row in enumerate(data["statements"], start=1):
        if not isinstance(row, dict) or not str(row.get("text") or "").strip() or "at" not in row:
            raise InvalidInput(f"{path}: statement {number} needs at and text.")
        statements.append((_moment(row["at"], what=f"statement {number}"), str(row.get("by") or ""), str(row["text"])))
    questions = []
    for number, row in enumerate(data["questions"], start=1):
        if not isinstance(row, dict) or not str(row.get("q") or "").strip() or not row.get("expect"):
            raise InvalidInput(f"{path}: question {number} needs q and expect.")
        questions.append(ScenarioQuestion(
            text=str(row["q"]), expect=_values(row["expect"], what=f"{path}: question {number}'s expect"),
            reject=_values(row.get("reject") or [], what=f"{path}: question {number}'s reject"),
            kind=str(row.get("kind") or "other"), asker=str(row.get("as") or ""),
        ))
    now = _moment(data.get("now") or statements[-1][0] + timedelta(days=1), what="now")
    return Scenario(team=str(data.get("team") or "team"), now=now, statements=statements, questions=questions)


def _values(given, *, what: str) -> list[str]:
    """`expect` or `reject`: a list of values, or one value written alone (`expect: Porto`), never its characters."""
    values = given if isinstance(given, list) else [given]
    if any(isinstance(v, (dict, list)) for v in values):
        raise InvalidInput(f"{what} must be a value or a list of values.")
    return [str(v) for v in values]


def normalised_answer(text: str) -> str:
    """Case, accents, punctuation and spacing ignored: how expected values are looked for."""
    import unicodedata

    text = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode().casefold()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def answer_is_right(answer_text: str, question: ScenarioQuestion) -> bool:
    """Every expected value appears in the answer (as whole words, normalised) and no rejected one does."""
    found = f" {normalised_answer(answer_text)} "
    has = lambda value: f" {normalised_answer(value)} " in found  # noqa: E731
    return all(has(v) for v in question.expect) and not any(has(v) for v in question.reject)


def run_scenarios(*, owner, path: str | Path = DEFAULT_SCENARIO, progress: Callable[..., None] | None = None) -> dict:
    """Store the scenario's statements in a throwaway scope of a throwaway team (named as the
    scenario says), extract each as the worker would, ask every question through `answer`, score."""
    from accounts.services import team_create
    from memories.services.extract import episode_extract
    from memories.services.ingest import remember
    from memories.models import Episode
    from retrieval.answer import answer

    from memories.extraction.extractors import extractor_get

    scenario = load_scenario(path)
    extractor = extractor_get().name
    progress = progress or no_progress
    suffix = uuid.uuid4().hex[:8]
    team = team_create(actor=None, slug=f"eval-scenario-{suffix}", name=scenario.team, owner=owner)
    scope = Scope.objects.create(team=team, slug=f"eval-scenario-{suffix}", name=f"Scenario {scenario.team}")
    records: list[dict] = []
    took: list[float] = []  # each answer's milliseconds
    failed_extractions = 0
    try:
        for number, (when, speaker, text) in enumerate(scenario.statements, start=1):
            progress(number - 1, len(scenario.statements), "statements")
            result = remember(scope=scope, text=text, speaker=speaker, occurred_at=when, actor=None, source="eval", enqueue=False)
            episode = Episode.objects.get(public_id=result.episodes[0].episode_id)
            if episode_extract(episode_pk=episode.pk).status != "done":
                failed_extractions += 1
        index_pending(scope=scope)
        provider = "offline"
        for number, question in enumerate(scenario.questions, start=1):
            progress(number - 1, len(scenario.questions), "questions")
            started = time.perf_counter()
            reply = answer(scope=scope, question=question.text, speaker=question.asker, now=scenario.now)
            took.append((time.perf_counter() - started) * 1000)
            provider = reply.provider
            records.append({
                "question": question.text, "kind": question.kind, "as": question.asker, "expect": question.expect,
                "reject": question.reject, "answer": reply.text, "right": answer_is_right(reply.text, question),
            })
        progress(len(scenario.questions), len(scenario.questions), "questions")
    finally:
        drop_scope(scope)
        team.delete()
    latency = {"answer_p50_ms": round(_percentile(took, 0.5), 1), "answer_p95_ms": round(_percentile(took, 0.95), 1)} if took else {}
    return summarise_scenarios(records, statements=len(scenario.statements), failed_extractions=failed_extractions,
                               extractor=extractor, provider=provider, scenario=str(path), **latency)


def summarise_scenarios(records: list[dict], **about) -> dict:
    def stats(rows: list[dict]) -> dict:
        right = sum(1 for r in rows if r["right"])
        return {"questions": len(rows), "right": right, "accuracy": round(right / len(rows), 4) if rows else 0.0}

    kinds = defaultdict(list)
    for r in records:
        kinds[r["kind"]].append(r)
    return {
        **about, **stats(records), "by_kind": {kind: stats(rows) for kind, rows in sorted(kinds.items())},
        "wrong": [r for r in records if not r["right"]],
    }


def format_scenario_report(report: dict) -> str:
    lines = [f"Scenario {report['scenario']}: {report['statements']} statements read by {report['extractor']}, "
             f"answers by {report['provider']}",
             f"{'kind':<14}{'questions':>10}{'right':>8}{'accuracy':>10}"]
    for kind, row in report["by_kind"].items():
        lines.append(f"{kind:<14}{row['questions']:>10}{row['right']:>8}{row['accuracy']:>10.3f}")
    lines.append(f"{'all':<14}{report['questions']:>10}{report['right']:>8}{report['accuracy']:>10.3f}")
    if "answer_p50_ms" in report:
        lines.append(f"answer latency p50/p95: {report['answer_p50_ms']}/{report['answer_p95_ms']} ms (in-process, the scope's evidence only)")
    if report.get("failed_extractions"):
        lines.append(f"extractions failed: {report['failed_extractions']}")
    for wrong in report["wrong"]:
        lines.append(f"wrong: {wrong['question']} (expected {', '.join(wrong['expect'])}) -> {wrong['answer'].splitlines()[0]}")
    return "\n".join(lines)
