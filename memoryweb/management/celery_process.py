"""What `memoryweb worker` and `memoryweb beat` share: the checks before Celery starts, and
starting it in this process with the project's app (memoryweb/celery.py) and settings."""

import sys

from django.conf import settings
from django.core.management.base import CommandError

from memoryweb.checks import check_broker, check_database

LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
# Exit code of a command that has nothing to do in this configuration (as for configuration errors, cli.py).
NOT_CONFIGURED = 2


def require_broker_and_database(program: str) -> None:
    """Refuse, in one sentence, to start `program` without a broker, or when Redis or the database
    does not answer: a worker or a scheduler would otherwise start and wait, or fail on the first task."""
    if not settings.REDIS_URL:
        raise CommandError(
            f"REDIS_URL is not set, so every web and CLI process runs its tasks in-process and there is no queue "
            f"for `memoryweb {program}` to serve: set REDIS_URL (the same for every process of the fleet).",
            returncode=NOT_CONFIGURED,
        )
    for check in (check_broker(), check_database()):
        if not check.ok:
            raise CommandError(check.detail)


def celery_run(argv: list[str]) -> None:
    """Run `celery <argv>` with memoryweb's app in this process; a non-zero exit code is kept."""
    from memoryweb.celery import app

    code = app.start(argv=argv)
    if code:
        sys.exit(code)
