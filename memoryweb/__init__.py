"""memoryweb: long-term memory for AI assistants that a team shares."""

__all__ = ["celery_app"]


def __getattr__(name: str):
    # The Celery app is loaded when first asked for (`celery -A memoryweb`, memoryweb.queue, the
    # tasks modules), not with the package: importing Celery costs about half a second, which the
    # remote CLI (memoryweb/cli_memory.py) and every `memoryweb --help` would otherwise pay.
    if name == "celery_app":
        from memoryweb.celery import app

        return app
    raise AttributeError(f"module 'memoryweb' has no attribute {name!r}")
