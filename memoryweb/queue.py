"""The one place background work is sent: by task name, so services never import task modules.

Task modules are doors (above every service layer); a service that imported one would import
upwards. So services say *which* work they want (`enqueue("memories.extract_episode", pk)`)
and this module finds the registered task by name.

Why the registered task and not `app.send_task(name)`: `send_task` always publishes to the
broker and ignores `task_always_eager`, so without a broker (the embedded default) the message
would go to the in-memory transport and never run. A registered task's `apply_async` honours
eager mode (runs in-process) and with a broker sends the message by its name. Tasks are
registered by Celery's own autodiscovery of each installed app's `tasks` module, forced here on
the first look-up of a name that is not registered yet (a web or CLI process never starts a
worker, which is when Celery would otherwise discover them). Autodiscovery imports by name at
run time, so this module imports nothing above `memoryweb`.
"""

import logging
import threading
from collections.abc import Callable
from functools import partial

from celery import Task
from django.conf import settings
from django.db import transaction

from memoryweb.celery import app

logger = logging.getLogger("memoryweb.queue")
# Requests run on threads of their own (ASGI): two first look-ups at once must not both import
# the apps' task modules, or one sees the other's half-imported module and no task (a 500).
_discovery = threading.Lock()
# Without a broker, a server process hands these tasks to its background runner instead of running
# them in the caller (`defer_to`, retrieval/background.py): the work is in the database already (a
# pending episode, a scope's rows above its index), so the runner needs only to be woken.
DEFERRABLE = frozenset({"memories.extract_episode", "retrieval.index_scope"})
_deferred: Callable[[str, tuple], None] | None = None


def defer_to(handler: Callable[[str, tuple], None] | None) -> None:
    """Send DEFERRABLE tasks to `handler(name, args)` from now on in this process (None: run them
    in the caller again). Only without a broker: with one, the workers take them."""
    global _deferred
    _deferred = handler


def enqueue(name: str, *args, on_commit: bool = True) -> None:
    """Run the task `name` with `args` on a worker (in-process without a broker).

    `on_commit`: send it once the current transaction commits (at once outside one), so the
    worker finds the rows it is about to read. Either way the call is robust: a broker that is
    down (or, in-process, a task that fails) is logged and does not fail a caller whose data is
    saved already; the healing task (`retrieval.heal`) re-queues what was lost.

    Without a broker, in a process with a background runner (`defer_to`), the extraction and
    indexing tasks wake that runner instead of running in the caller."""
    if _deferred is not None and name in DEFERRABLE and not settings.REDIS_URL:
        send = partial(_deferred, name, args)
    else:
        send = partial(registered_task(name).apply_async, args)
    if on_commit:
        transaction.on_commit(send, robust=True)
        return
    try:
        send()
    except Exception:
        logger.exception("Could not queue %s%r", name, args)


def registered_task(name: str) -> Task:
    """The task registered under `name`; an unknown name is a programming error, raised at once
    rather than a message that no worker will ever run."""
    task = app.tasks.get(name)
    if task is None:
        with _discovery:
            task = app.tasks.get(name)
            if task is None:
                app.autodiscover_tasks(force=True)
                task = app.tasks.get(name)
    if task is None:
        raise LookupError(f"No Celery task is registered as {name!r}.")
    return task
