from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from memoryweb.management.base import MemorywebCommand
from memoryweb.management.celery_process import LOG_LEVELS, celery_run, require_broker_and_database

# Sends only while it holds the fleet's lock in Redis: two beats never schedule a task twice.
BEAT_SCHEDULER = "memoryweb.beat_scheduler:LeaderScheduler"


class Command(MemorywebCommand):
    help = ("Start Celery beat, the scheduler of memoryweb's periodic tasks (healing, pruning the call log, "
            "scheduled backups; CELERY_BEAT_SCHEDULE). Several may run: one holds a lock in Redis and schedules, "
            "the others stand by and take over when it stops (MEMORYWEB_BEAT_LOCK_SECONDS).")
    acts_as_user = False

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--schedule", "-s", type=Path, default=None,
                            help="the file where beat keeps when each task last ran "
                                 "(default $MEMORYWEB_HOME/celerybeat-schedule)")
        parser.add_argument("--loglevel", "-l", type=str.upper, choices=LOG_LEVELS, default="INFO")

    def handle(self, *args, **options):
        require_broker_and_database("beat")
        schedule = options["schedule"] or settings.MEMORYWEB_HOME / "celerybeat-schedule"
        try:
            schedule.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"The schedule file's folder {schedule.parent} cannot be created ({exc.strerror}).") from None
        celery_run(["beat", "--loglevel", options["loglevel"], "--schedule", str(schedule), "--scheduler", BEAT_SCHEDULER])
