"""`memoryweb bench backup`: backup and restore throughput (rows/s) and file size for a synthetic
scope of `facts` facts (retrieval/bench.py's builders: people with aliases and facts). Not a
test: run it against a throwaway MEMORYWEB_HOME. The scopes it builds are deleted afterwards."""

import os
import random
import sys
import tempfile
import time
import uuid

from memoryweb.providers.embedders import get_embedder
from memories.models import Scope
from retrieval.backup import scope_backup, scope_restore
from retrieval.bench import _facts, _people
from retrieval.bench_ingest import scope_delete_throwaway
from retrieval.indexing import index_pending


def bench_backup(*, principal, facts: int = 100_000, with_vectors: bool = False, seed: int = 7, stdout=None) -> dict:
    out = stdout or sys.stdout
    rng = random.Random(seed)
    from accounts.services import personal_team_ensure

    tag = uuid.uuid4().hex[:8]
    source = Scope.objects.create(team=personal_team_ensure(user=principal.user), slug=f"bench-{tag}", name="bench backup")
    restored = None
    figures: dict = {"facts": facts, "with_vectors": with_vectors, "embedder": get_embedder().name}
    try:
        started = time.perf_counter()
        people = _people(source, max(facts // 5, 1), rng)
        figures["facts"] = _facts(source, people, facts, rng)
        out.write(f"built {figures['facts']} facts about {len(people)} people ({time.perf_counter() - started:.1f} s)\n")
        if with_vectors:
            started = time.perf_counter()
            index_pending(scope=source, full=True)
            out.write(f"indexed the source ({time.perf_counter() - started:.1f} s)\n")
        with tempfile.TemporaryFile() as file:
            receipt = scope_backup(principal=principal, scope=source, out=file, with_vectors=with_vectors)
            rows = sum(receipt.counts.values())
            figures.update(rows=rows, counts=receipt.counts, bytes=receipt.bytes, backup_seconds=receipt.seconds,
                           backup_rows_per_second=round(rows / receipt.seconds))
            out.write(f"backup: {rows} rows in {receipt.seconds:.1f} s = {rows / receipt.seconds:,.0f} rows/s, "
                      f"{receipt.bytes / 1e6:.1f} MB ({receipt.bytes / rows:.0f} bytes/row)\n")
            file.seek(0)
            marks = {"start": time.perf_counter()}

            def progress(done: int, total: int) -> None:
                if done >= total and "rows" not in marks:
                    marks["rows"] = time.perf_counter()

            restore = scope_restore(principal=principal, file=file, scope=f"bench-{tag}-restored", progress=progress)
            restored = Scope.objects.get(slug=restore.scope)
            rows_seconds = marks.get("rows", time.perf_counter()) - marks["start"]
            figures.update(restore_seconds=restore.seconds, restore_rows_seconds=round(rows_seconds, 3),
                           restore_rows_per_second=round(rows / rows_seconds), index_seconds=round(restore.seconds - rows_seconds, 3),
                           documents=restore.documents, vectors_reused=restore.vectors_reused)
            out.write(f"restore: rows in {rows_seconds:.1f} s = {rows / rows_seconds:,.0f} rows/s (one transaction); "
                      f"then the search index, {restore.documents} documents, in {restore.seconds - rows_seconds:.1f} s "
                      f"({restore.vectors_reused} vectors reused); {rows / restore.seconds:,.0f} rows/s in all\n")
        figures["rss_max_mb"] = _max_rss_mb()
        out.write(f"peak memory of this process: {figures['rss_max_mb']} MB\n")
        return figures
    finally:
        for scope in (restored, source):
            if scope is not None:
                scope_delete_throwaway(scope=scope)


def _max_rss_mb() -> int:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024) if os.name == "posix" else 0
