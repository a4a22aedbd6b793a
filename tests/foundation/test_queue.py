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
