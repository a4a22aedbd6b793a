import argparse

from memoryweb.management.base import MemorywebCommand
from memoryweb.management.celery_process import LOG_LEVELS, celery_run, require_broker_and_database
from memoryweb.warmup import native_threads_limit


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, not {value}")
    return value


class Command(MemorywebCommand):
    help = ("Start a Celery worker with memoryweb's settings: it extracts episodes and indexes scopes queued by "
            "every web and CLI process through Redis (REDIS_URL). Run as many as you like, on any machine.")
    acts_as_user = False

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--concurrency", type=_positive, default=None,
                            help="tasks run at once by this worker (default: one per CPU)")
        parser.add_argument("--pool", choices=["prefork", "solo", "threads"], default="prefork",
                            help="prefork (the default) enforces the task time limits; solo runs one task at a time "
                                 "in this process, without them")
        parser.add_argument("--queues", "-Q", default="",
                            help="comma-separated queues to consume (default: Celery's default queue, 'celery')")
        parser.add_argument("--hostname", "-n", default="",
                            help="this worker's node name (default celery@HOST; give each worker on one host its own)")
        parser.add_argument("--loglevel", "-l", type=str.upper, choices=LOG_LEVELS, default="INFO")

    def handle(self, *args, **options):
        native_threads_limit()  # each prefork child embeds: one native thread each, as a server process (warmup.py)
        require_broker_and_database("worker")
        argv = ["worker", "--loglevel", options["loglevel"], "--pool", options["pool"],
                # Gossip and mingle keep workers in touch with each other (events, revoked ids at start);
                # memoryweb uses neither, and without them a worker starts at once and Redis carries less.
                "--without-gossip", "--without-mingle"]
        if options["concurrency"]:
            argv += ["--concurrency", str(options["concurrency"])]
        if options["queues"]:
            argv += ["--queues", options["queues"]]
        if options["hostname"]:
            argv += ["--hostname", options["hostname"]]
        celery_run(argv)
