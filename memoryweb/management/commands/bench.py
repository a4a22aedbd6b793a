from django.core.management.base import CommandError

from memoryweb.management.base import MemorywebCommand


class Command(MemorywebCommand):
    help = "Benchmarks on this machine (not tests): `bench ingest`, `bench recall`."

    def add_command_arguments(self, parser) -> None:
        sub = self.add_subcommands(parser)
        ingest = sub.add_parser("ingest", help="raw turns/s and episodes/s through offline extraction, in a throwaway scope")
        ingest.add_argument("--turns", type=int, default=1000, help="raw turns to ingest (default 1000)")
        ingest.add_argument("--episodes", type=int, default=200, help="episodes to run through extraction (default 200)")
        ingest.add_argument("--session-size", type=int, default=50, help="turns per ingest_session call (default 50)")
        sub.add_parser("recall", help="recall latency and quality (retrieval/bench.py)")

    def handle(self, *args, **options):
        principal = self.principal(options)
        if options["action"] == "recall":
            try:
                from retrieval.bench import bench_recall
            except ImportError:
                raise CommandError("bench recall is not available yet.") from None
            result = bench_recall(principal=principal)
            data = result.as_dict() if hasattr(result, "as_dict") else result
            self.emit(options, data, "\n".join(f"{k}: {v}" for k, v in dict(data).items()))
            return
        from memories.bench import bench_ingest

        for name in ("turns", "episodes", "session_size"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")
        result = bench_ingest(
            principal=principal, turns=options["turns"], episodes=min(options["episodes"], options["turns"]),
            session_size=options["session_size"],
        )
        self.emit(options, result.as_dict(), "\n".join([
            f"embedder {result.embedder} (loaded in {result.model_load_seconds} s)",
            f"raw ingest: {result.turns} turns in {result.sessions} sessions, {result.turn_seconds} s: "
            f"{result.turns_per_second} turns/s",
            f"extraction (offline) + reconciliation: {result.episodes} episodes, {result.episode_seconds} s: "
            f"{result.episodes_per_second} episodes/s, {result.facts} facts, {result.failed} failed",
            "(the throwaway scope was deleted)",
        ]))
