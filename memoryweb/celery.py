"""The Celery app. Without REDIS_URL tasks run eagerly in-process (the embedded default)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")

app = Celery("memoryweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="memoryweb.ping")
def ping(value: str = "pong") -> str:
    """A task with no side effects, used by `memoryweb config` and the worker integration test."""
    return value
