"""memoryweb: long-term memory for AI assistants that a team shares."""

from .celery import app as celery_app

__all__ = ["celery_app"]
