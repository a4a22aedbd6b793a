"""`memoryweb bench ingest`: how fast raw turns go in, and how fast episodes go through
extraction and reconciliation, on this machine. A benchmark, not a test.

Works in a throwaway scope that is deleted afterwards. Two figures:
- raw turns/s: `ingest_session` (validation, one transaction per session) without queueing
  anything, which is what a caller waits for when a broker takes the rest; and indexed turns/s,
  the same plus the search index catching up (BM25 documents for each turn and its windows,
  embedded in batches by the embedder in force), which is what a caller waits for in-process;
- episodes/s: extraction (claim, then extract, as the task does) run in-process on the first
  episodes, with the offline extractor whatever LLM_PROVIDER says: rules, entity resolution,
  reconciliation and the facts' embeddings.
Model loading is timed apart (it happens once per process).
"""

import random
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

from django.db import transaction
from django.test.utils import override_settings

from accounts.permissions import Principal
from memoryweb.progress import no_progress
from memoryweb.providers.embedders import embedder_warm_up, get_embedder
from memories.models import Episode, EpisodeStatus, Fact, Scope
from memories.scopes import scope_create
from memories.services.extract import episode_claim, episode_extract
from memories.services.ingest import ingest_session
from retrieval.indexing import index_pending

_PEOPLE = ["ankesh", "maria", "li", "tom", "aisha", "jonas", "priya", "omar", "sofia", "ken"]
_CITIES = ["San Francisco", "New York", "Berlin", "London", "Paris", "Tokyo", "Lisbon", "Toronto", "Sydney", "Madrid"]
_COMPANIES = ["Google", "Acme", "Globex", "Initech", "Umbrella", "Stark Industries", "Wayne Enterprises", "Hooli"]
_ROLES = ["software engineer", "senior engineer", "designer", "product manager", "data scientist", "staff engineer"]
_LIKES = ["football", "chess", "jazz", "hiking", "sushi", "painting", "tennis", "cooking", "poetry", "cycling"]
_PETS = ["Rex", "Luna", "Milo", "Bella", "Max"]
_TEMPLATES = [
    "I love {like}",
    "I just started at {company} as a {role} in {city}",
    "I got promoted to {role} at {company}",
    "I moved from {city} to {city2}",
    "I live in {city}",
    "I have a dog named {pet}",
    "I don't like {like} anymore",
    "haha that sounds great, see you tomorrow",
    "what do you think about {like}?",
    "My favorite food is {like}",
]


@dataclass
class IngestBenchResult:
    turns: int
    sessions: int
    turn_seconds: float
    turns_per_second: float
    index_seconds: float
    indexed_turns_per_second: float
    episodes: int
    episode_seconds: float
    episodes_per_second: float
    facts: int
    failed: int
    embedder: str
    model_load_seconds: float
    # Texts the model embedded while indexing, per turn (1: a turn's windows cost no pass of their
    # own), and the seconds the model took of index_seconds (the rest is SQL and Python).
    model_passes_per_turn: float = 0.0
    model_seconds: float = 0.0
    source: str = "synthetic"  # or the LOCOMO file the sessions came from

    def as_dict(self) -> dict:
        return asdict(self)


def synthetic_sessions(
    *, turns: int, session_size: int, seed: int = 7, start: datetime | None = None,
) -> list[tuple[str, list[dict]]]:
    """Chat-like sessions: people living, working, moving and liking things, and small talk,
    a turn every six hours from `start` (default 2023-01-01)."""
    rng = random.Random(seed)
    start = start or datetime(2023, 1, 1, tzinfo=UTC)
    sessions = []
    for offset in range(0, turns, session_size):
        speaker = _PEOPLE[(offset // session_size) % len(_PEOPLE)]
        messages = []
        for number in range(offset, min(turns, offset + session_size)):
            cities = rng.sample(_CITIES, 2)
            text = rng.choice(_TEMPLATES).format(
                like=rng.choice(_LIKES), company=rng.choice(_COMPANIES), role=rng.choice(_ROLES), city=cities[0],
                city2=cities[1], pet=rng.choice(_PETS),
            )
            messages.append({"id": str(number), "speaker": speaker, "text": text,
                             "occurred_at": (start + timedelta(hours=6 * number)).isoformat()})
        sessions.append((f"bench-{offset // session_size}", messages))
    return sessions


_QUESTIONS = [
    "Who moved to {city}?", "Who lives in {city}?", "Who works at {company}?", "Who loves {like}?",
    "What does {person} think about {like}?", "Where does {person} work?", "Who has a dog named {pet}?",
    "Did {person} get promoted?",
]


def synthetic_question(rng: random.Random) -> str:
    """A question about what `synthetic_sessions` talk about."""
    return rng.choice(_QUESTIONS).format(
        city=rng.choice(_CITIES), company=rng.choice(_COMPANIES), like=rng.choice(_LIKES), person=rng.choice(_PEOPLE),
        pet=rng.choice(_PETS),
    )


def locomo_sessions(dataset: str, *, turns: int) -> list[tuple[str, list[dict]]]:
    """The real sessions of a LOCOMO file's conversations, in order, up to `turns` turns (the last
    session cut short): what a team's conversations look like to the indexer, each text its own
    (synthetic templates repeat, and repeated texts are embedded once)."""
    from retrieval.eval import load_locomo

    out, left = [], turns
    for conv in load_locomo(dataset):
        for session_id, _, messages in conv.sessions:
            if left <= 0:
                return out
            out.append((f"{conv.sample_id}-{session_id}", messages[:left]))
            left -= len(out[-1][1])
    return out


def bench_ingest(
    *, principal: Principal, turns: int = 1000, episodes: int = 200, session_size: int = 50, progress: Callable[..., None] | None = None,
    dataset: str | None = None,
) -> IngestBenchResult:
    """`progress(done, total, stage)` (memoryweb/progress.py) hears of each session, the index and each episode.
    `dataset`: a LOCOMO file whose real sessions are ingested instead of synthetic ones (`locomo_sessions`)."""
    progress = progress or no_progress
    scope = scope_create(principal=principal, slug=f"bench-{uuid.uuid4().hex[:10]}", name="throwaway benchmark scope")
    try:
        started = time.perf_counter()
        embedder = get_embedder()
        embedder_warm_up(embedder)
        model_load = time.perf_counter() - started

        sessions = locomo_sessions(dataset, turns=turns) if dataset else synthetic_sessions(turns=turns, session_size=session_size)
        turns = sum(len(messages) for _, messages in sessions)
        started = time.perf_counter()
        for number, (session_id, messages) in enumerate(sessions, start=1):
            ingest_session(scope=scope, session_id=session_id, messages=messages, actor=principal, source="bench", enqueue=False)
            progress(number, len(sessions), "ingest sessions")
        turn_seconds = time.perf_counter() - started
        progress(0, turns, "index turns")
        started = time.perf_counter()
        counted = _Counting(embedder)
        index_pending(scope=scope, embedder=counted)
        index_seconds = time.perf_counter() - started
        progress(turns, turns, "index turns")

        pending = list(Episode.objects.in_scope(scope).order_by("occurred_at", "id").values_list("pk", flat=True)[:episodes])
        with override_settings(LLM_PROVIDER="offline"):
            started = time.perf_counter()
            for number, pk in enumerate(pending, start=1):
                # What the extraction task does in-process: claim, then extract (no retries here).
                if episode_claim(episode_pk=pk, claim_id="bench"):
                    episode_extract(episode_pk=pk)
                progress(number, len(pending), "extract episodes")
            episode_seconds = time.perf_counter() - started
        failed = Episode.objects.in_scope(scope).filter(pk__in=pending, status=EpisodeStatus.FAILED).count()
        facts = Fact.objects.in_scope(scope).count()
    finally:
        scope_delete_throwaway(scope=scope)
    return IngestBenchResult(
        turns=turns, sessions=len(sessions), turn_seconds=round(turn_seconds, 3),
        turns_per_second=round(turns / turn_seconds, 1) if turn_seconds else 0.0,
        index_seconds=round(index_seconds, 3),
        indexed_turns_per_second=round(turns / (turn_seconds + index_seconds), 1),
        episodes=len(pending), episode_seconds=round(episode_seconds, 3),
        episodes_per_second=round(len(pending) / episode_seconds, 1) if episode_seconds else 0.0,
        facts=facts, failed=failed, embedder=embedder.name, model_load_seconds=round(model_load, 2),
        model_passes_per_turn=round(counted.texts / turns, 2) if turns else 0.0, model_seconds=round(counted.seconds, 3),
        source=str(dataset) if dataset else "synthetic",
    )


class _Counting:
    """The embedder, counting the texts it embeds and the time it takes (same name and dimension)."""

    def __init__(self, embedder):
        self.name, self.dim, self._embedder, self.texts, self.seconds = embedder.name, embedder.dim, embedder, 0, 0.0

    def embed(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return self._embedder.embed(texts)
        finally:
            self.texts += len(texts)
            self.seconds += time.perf_counter() - started


def scope_delete_throwaway(*, scope: Scope) -> None:
    """Delete a benchmark scope and everything in it. The search index goes first, in bulk (a
    benchmark's can hold a million rows); then facts: they protect their entities and the facts
    they supersede from deletion. A large scope's own HNSW graphs go with it (empty, they would
    stay in the catalogue)."""
    from memories.models import Embedding, Entity, EntityAlias, Mention, Session
    from memories.services.vectors import scope_graphs_drop
    from retrieval.models import CorpusStat, IndexState, Posting, SearchDocument, TermStat

    with transaction.atomic():
        scope_graphs_drop(scope_id=scope.pk)
        for model in (Posting, Embedding, TermStat, CorpusStat, IndexState):
            model.objects.filter(scope=scope).delete()  # no rows point at these: one DELETE each
        SearchDocument.objects.filter(scope=scope).delete()
        Fact.objects.in_scope(scope).update(supersedes=None)
        Fact.objects.in_scope(scope).delete()
        Mention.objects.in_scope(scope).delete()
        Episode.objects.in_scope(scope).delete()
        Session.objects.in_scope(scope).delete()
        EntityAlias.objects.in_scope(scope).delete()
        Entity.objects.in_scope(scope).update(merged_into=None)
        Entity.objects.in_scope(scope).delete()
        Scope.objects.filter(pk=scope.pk).delete()
