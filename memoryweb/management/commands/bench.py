import argparse
import sys

from django.conf import settings
from django.core.management.base import CommandError

from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import progress_bar
from memories.scopes import scope_get


def _counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, like 1,4,16, not {text!r}") from None
    if not counts:
        raise argparse.ArgumentTypeError("expected at least one number, like 1,4,16")
    return counts


class Command(MemorywebCommand):
    help = "Benchmarks on this machine (not tests): `bench ingest`, `bench recall`, `bench api`, `bench backup`, `bench reindex`, `bench fleet`."

    def add_command_arguments(self, parser) -> None:
        sub = self.add_subcommands(parser)
        ingest = sub.add_parser("ingest", help="raw turns/s and episodes/s through offline extraction, in a throwaway scope")
        ingest.add_argument("--turns", type=int, default=1000, help="raw turns to ingest (default 1000)")
        ingest.add_argument("--episodes", type=int, default=200, help="episodes to run through extraction (default 200)")
        ingest.add_argument("--session-size", type=int, default=50, help="turns per ingest_session call (default 50)")
        ingest.add_argument("--dataset", help="a LOCOMO JSON file: ingest its conversations' real sessions, in order, instead of"
                                              " synthetic ones (--turns caps them; --session-size is ignored)")
        recall = sub.add_parser("recall", help="recall latency in a synthetic scope among noise scopes (rebuilds the HNSW index: use a scratch database)")
        recall.add_argument("--facts", type=int, default=10_000, help="facts in the measured scope (default 10000)")
        recall.add_argument("--scopes", type=int, default=10, help="noise scopes of the same size (default 10)")
        recall.add_argument("--queries", type=int, default=200, help="queries to time (default 200)")
        recall.add_argument("--turns", type=int, default=0,
                            help="build a conversation of this many turns instead of facts, searched with recall_evidence")
        recall.add_argument("--keep", action="store_true", help="keep the built scopes, to measure them again with --scope")
        recall.add_argument("--scope", help="measure a scope kept by an earlier `bench recall --keep` instead of building one")
        recall.add_argument("--latency-only", action="store_true",
                            help="time recall only, without the exact rankings it is compared with (minutes at a million turns)")
        backup = sub.add_parser("backup", help="backup and restore rows/s and file size for a synthetic scope (use a scratch database)")
        backup.add_argument("--facts", type=int, default=100_000, help="facts in the scope (default 100000)")
        backup.add_argument("--with-vectors", action="store_true", help="index the scope first and back up its vectors too")

        reindex = sub.add_parser("reindex", help="vectors/s of `reindex` on a LOCOMO conversation ingested offline, in a throwaway scope")
        reindex.add_argument("--dataset", required=True, help="the LOCOMO JSON file (e.g. locomo-dev.json)")
        reindex.add_argument("--conversation", default="", help="its sample id (default: the first)")
        reindex.add_argument("--from", dest="source", default="hash", help="the model it is indexed with first (default hash)")
        reindex.add_argument("--model", default="local", help="the model it is reindexed to (default local)")
        reindex.add_argument("--batch-size", type=int, help="vectors per batch (default MEMORYWEB_REINDEX_BATCH)")

        api = sub.add_parser("api", help="recall and remember through the real server (memoryweb serve) against recall in-process")
        api.add_argument("--clients", type=_counts, default=[1, 4, 16], help="concurrent clients, one run each (default 1,4,16)")
        api.add_argument("--seconds", type=float, default=30, help="seconds per operation and client count (default 30)")
        api.add_argument("--workers", type=int, default=None,
                         help="server worker processes (default: serve's, MEMORYWEB_WORKERS or one per core, at most 4)")
        api.add_argument("--facts", type=int, default=10_000, help="facts in the scope it builds (default 10000)")
        api.add_argument("--queries", type=int, default=200, help="in-process recalls to time (default 200)")
        api.add_argument("--keep", action="store_true", help="keep the built scope, to measure it again with --scope")
        api.add_argument("--scope", help="measure a scope kept by an earlier `bench api --keep` (or `bench recall --keep`)")
        api.add_argument("--operations", type=lambda v: tuple(p for p in v.split(",") if p), default=("recall", "remember", "writes"),
                         help="what the clients send: recall, remember, writes (the write-heavy mix: remember with 4 "
                              "recall clients beside, and the write→searchable delay); default all three")
        fleet = sub.add_parser("fleet", help="episodes/s through web processes and N workers on Redis (REDIS_URL; a scratch database and Redis)")
        fleet.add_argument("--workers", type=_counts, default=[1, 2], help="worker processes, one run each (default 1,2)")
        fleet.add_argument("--webs", type=int, default=2, help="web processes (default 2)")
        fleet.add_argument("--episodes", type=int, default=240, help="episodes sent per run (default 240)")
        fleet.add_argument("--clients", type=int, default=8, help="concurrent HTTP clients (default 8)")

    def handle(self, *args, **options):
        # A long run written to a file (`… > bench.log`) shows each line as it is printed, not when
        # the buffer fills: a million-turn build prints for hours.
        for stream in (sys.stdout, sys.stderr):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(line_buffering=True)
        principal = self.principal(options)
        if options["action"] == "fleet":
            from retrieval.bench_fleet import bench_fleet

            data = bench_fleet(principal=principal, workers=options["workers"], webs=options["webs"], episodes=options["episodes"],
                               clients=options["clients"], stdout=self.stderr if options["json"] else self.stdout)
            if options["json"]:
                self.emit(options, data, "")
            return
        if options["action"] == "api":
            from retrieval.bench_api import bench_api

            if options["workers"] is None:
                options["workers"] = settings.MEMORYWEB_WORKERS
            for name in ("facts", "queries", "workers"):
                if options[name] < 1:
                    raise CommandError(f"--{name} must be at least 1.")
            existing = scope_get(principal, options["scope"], Access.WRITE) if options["scope"] else None
            data = bench_api(
                principal=principal, clients=options["clients"], seconds=options["seconds"], workers=options["workers"],
                facts=options["facts"], existing=existing, keep=options["keep"], queries=options["queries"],
                operations=options["operations"], stdout=self.stderr if options["json"] else self.stdout,
            )
            if options["json"]:
                self.emit(options, data, "")
            return
        if options["action"] == "recall":
            from retrieval.bench import bench_recall

            for name in ("facts", "queries"):
                if options[name] < 1:
                    raise CommandError(f"--{name} must be at least 1.")
            if options["scopes"] < 0:
                raise CommandError("--scopes must be 0 or more.")
            if options["turns"] < 0:
                raise CommandError("--turns must be 0 or more.")
            existing = scope_get(principal, options["scope"]) if options["scope"] else None
            data = bench_recall(
                principal=principal, facts=options["facts"], scopes=options["scopes"], queries=options["queries"],
                keep=options["keep"], existing=existing, turns=options["turns"], references=not options["latency_only"],
                stdout=self.stderr if options["json"] else self.stdout,
            )
            if options["json"]:  # the readable report went to stdout as it ran
                self.emit(options, data, "")
            return
        if options["action"] == "backup":
            from retrieval.bench_backup import bench_backup

            if options["facts"] < 1:
                raise CommandError("--facts must be at least 1.")
            data = bench_backup(principal=principal, facts=options["facts"], with_vectors=options["with_vectors"],
                                stdout=self.stderr if options["json"] else self.stdout)
            if options["json"]:
                self.emit(options, data, "")
            return
        if options["action"] == "reindex":
            from retrieval.bench_reindex import bench_reindex

            if options["batch_size"] is not None and options["batch_size"] < 1:
                raise CommandError("--batch-size must be at least 1.")
            with progress_bar(label="bench reindex", quiet=options["json"], unit="") as progress:
                data = bench_reindex(principal=principal, dataset=options["dataset"], conversation=options["conversation"],
                                     source=options["source"], model=options["model"], batch_size=options["batch_size"],
                                     progress=progress)
            self.emit(options, data, (
                f"{data['conversation']}: {data['turns']} turns, indexed with {data['from']} in {data['index_s_with_old_model']} s;"
                f" reindexed to {data['model']} (loaded in {data['model_load_s']} s): {data['vectors']} vectors in"
                f" {data['reindex_s']} s, {data['vectors_per_second']} vectors/s ({data['reindex_cpu_s']} s of this process's CPU,"
                f" {data['vectors_per_cpu_second']} vectors per CPU second; the throwaway scope was deleted)"
            ))
            return
        from retrieval.bench_ingest import bench_ingest

        for name in ("turns", "episodes", "session_size"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")
        with progress_bar(label="bench ingest", quiet=options["json"], unit="") as progress:
            result = bench_ingest(
                principal=principal, turns=options["turns"], episodes=min(options["episodes"], options["turns"]),
                session_size=options["session_size"], progress=progress, dataset=options.get("dataset"),
            )
        self.emit(options, result.as_dict(), "\n".join([
            f"embedder {result.embedder} (loaded in {result.model_load_seconds} s)",
            f"raw ingest: {result.turns} turns in {result.sessions} sessions ({result.source}), {result.turn_seconds} s: "
            f"{result.turns_per_second} turns/s (committed; a broker does the rest)",
            f"search indexing (batched embeddings): {result.index_seconds} s: "
            f"{result.indexed_turns_per_second} turns/s ingested and indexed (the in-process default); "
            f"{result.model_passes_per_turn} model passes per turn, {result.model_seconds} s of it in the model",
            f"extraction (offline) + reconciliation: {result.episodes} episodes, {result.episode_seconds} s: "
            f"{result.episodes_per_second} episodes/s, {result.facts} facts, {result.failed} failed",
            "(the throwaway scope was deleted)",
        ]))
