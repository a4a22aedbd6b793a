"""The queue module: work is sent by task name; without a broker the registered task runs
in-process (after the commit), and an unknown name is an error, not a message nobody runs."""

import pytest

from memoryweb.queue import enqueue, registered_task


@pytest.mark.django_db
def test_a_task_sent_by_name_runs_in_process_after_the_commit(django_capture_on_commit_callbacks, monkeypatch):
    calls = []
    task = registered_task("memoryweb.ping")
    monkeypatch.setattr(task, "run", lambda value="pong": calls.append(value) or value)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        enqueue("memoryweb.ping", "after commit")
        assert calls == []  # not before the commit
    assert len(callbacks) == 1 and calls == ["after commit"]
    enqueue("memoryweb.ping", "now", on_commit=False)
    assert calls == ["after commit", "now"]


def test_the_apps_tasks_are_found_by_name():
    assert registered_task("memories.extract_episode").name == "memories.extract_episode"
    assert registered_task("retrieval.index_scope").name == "retrieval.index_scope"
    assert registered_task("retrieval.heal").name == "retrieval.heal"


def test_an_unknown_task_name_is_refused_at_once():
    with pytest.raises(LookupError, match="memories.no_such_task"):
        enqueue("memories.no_such_task", 1)


def test_first_look_ups_on_several_threads_at_once_discover_the_tasks_once(monkeypatch):
    # ASGI requests run on threads of their own: the first remembers after a start look up
    # 'retrieval.index_scope' together, and only one may import the task modules.
    import threading
    import time

    from memoryweb.celery import app

    names = ["retrieval.index_scope", "memories.extract_episode"]
    saved = {name: registered_task(name) for name in names}
    discoveries = []

    def slow_discovery(force=False):
        discoveries.append(threading.get_ident())
        time.sleep(0.2)  # the imports take a while
        app.tasks.update(saved)

    for name in names:
        app.tasks.pop(name)
    monkeypatch.setattr(app, "autodiscover_tasks", slow_discovery)
    found, errors = [], []

    def look_up():
        try:
            found.append(registered_task("retrieval.index_scope").name)
        except LookupError as exc:
            errors.append(exc)

    try:
        threads = [threading.Thread(target=look_up) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        app.tasks.update(saved)
    assert not errors and found == ["retrieval.index_scope"] * 8
    assert len(discoveries) == 1
