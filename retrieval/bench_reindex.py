"""`memoryweb bench reindex`: vectors/s of `scope_reindex` on a LOCOMO conversation.

One conversation goes through `ingest_session` (raw turns, no extraction: offline and quick) into a
throwaway scope, indexed with the `--from` embedder (hash by default, so the index costs seconds);
then the scope is reindexed to `--model` (local by default) and the run is timed: every search
document (each turn and its ±1/±2 windows) gets a vector of the new model. The scope is deleted after.
"""

import time
import uuid
from collections.abc import Callable
from pathlib import Path

from accounts.permissions import Principal
from memoryweb.errors import InvalidInput
from memories.scopes import scope_create
from memories.services.ingest import ingest_session
from retrieval.bench_ingest import scope_delete_throwaway
from retrieval.eval import load_locomo
from retrieval.indexing import index_pending
from retrieval.reindex import reindex_embedder, scope_reindex


def bench_reindex(
    *, principal: Principal, dataset: str | Path, conversation: str = "", source: str = "hash", model: str = "local",
    batch_size: int | None = None, progress: Callable[..., None] | None = None,
) -> dict:
    convs = load_locomo(dataset, only=[conversation] if conversation else None)
    if not convs:
        raise InvalidInput(f"No conversation {conversation!r} in {dataset}.")
    conv = convs[0]
    started = time.perf_counter()
    old, new = reindex_embedder(source), reindex_embedder(model)
    if old.name == new.name:
        raise InvalidInput(f"--from and --model are the same model ({new.name}): nothing to reindex.")
    new.embed(["warm up"])  # the model's load is not the reindex's rate
    load_seconds = time.perf_counter() - started
    scope = scope_create(principal=principal, slug=f"bench-reindex-{uuid.uuid4().hex[:8]}", name="throwaway benchmark scope")
    try:
        for index, (session_id, _, messages) in enumerate(conv.sessions, start=1):
            ingest_session(scope=scope, session_id=session_id, messages=messages, actor=principal, source="bench", enqueue=False)
            if progress:
                progress(index, len(conv.sessions), "ingest sessions")
        started = time.perf_counter()
        index_pending(scope=scope, embedder=old)
        index_seconds = time.perf_counter() - started
        stage = f"{old.name} → {new.name}"
        cpu = time.process_time()
        report = scope_reindex(principal=principal, scope=scope, model=model, batch_size=batch_size,
                               progress=(lambda done, total: progress(done, total, stage)) if progress else None)
        cpu = time.process_time() - cpu
    finally:
        scope_delete_throwaway(scope=scope)
    return {
        "conversation": conv.sample_id, "turns": conv.turn_count, "from": old.name, "model": new.name,
        "model_load_s": round(load_seconds, 2), "index_s_with_old_model": round(index_seconds, 2),
        "vectors": report.embedded, "reindex_s": report.seconds, "vectors_per_second": report.rate,
        # This process's CPU (the model; PostgreSQL's inserts into the HNSW index are not in it): on a
        # loaded machine, vectors per CPU second says more than per wall second.
        "reindex_cpu_s": round(cpu, 2), "vectors_per_cpu_second": round(report.embedded / cpu, 1) if cpu > 0 else 0.0,
        "switched": report.switched,
    }
