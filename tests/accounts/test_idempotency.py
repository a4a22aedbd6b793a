"""The idempotency service: claims, replays, conflicts, the in-progress answer, expiry."""

import threading
from datetime import timedelta

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.utils import timezone

from accounts.idempotency import idempotent
from accounts.models import IdempotentRequest
from memoryweb.errors import Conflict


def _counter():
    calls = []

    def run():
        calls.append(1)
        return 201, {"n": len(calls), "when": timezone.now()}

    return calls, run


def test_a_replay_returns_the_stored_answer_without_running(cast):
    calls, run = _counter()
    first = idempotent(principal=cast.p_owner, key="k", operation="op", body={"a": 1}, run=run)
    again = idempotent(principal=cast.p_owner, key="k", operation="op", body={"a": 1}, run=run)
    assert len(calls) == 1
    assert first[0] == again[0] == 201 and again[1]["n"] == 1
    assert again[1]["when"] == DjangoJSONEncoder().default(first[1]["when"])  # as stored: JSON


def test_another_body_under_the_key_is_a_conflict(cast):
    _, run = _counter()
    idempotent(principal=cast.p_owner, key="k", operation="op", body={"a": 1}, run=run)
    with pytest.raises(Conflict, match="used for another request"):
        idempotent(principal=cast.p_owner, key="k", operation="op", body={"a": 2}, run=run)


def test_an_expired_key_runs_again(cast, settings):
    calls, run = _counter()
    idempotent(principal=cast.p_owner, key="k", operation="op", body={}, run=run)
    IdempotentRequest.objects.update(created_at=timezone.now() - timedelta(hours=settings.MEMORYWEB_IDEMPOTENCY_KEY_HOURS, seconds=1))
    idempotent(principal=cast.p_owner, key="k", operation="op", body={}, run=run)
    assert len(calls) == 2 and IdempotentRequest.objects.count() == 1


def test_a_failing_write_releases_its_key(cast):
    def boom():
        raise RuntimeError("the write failed")

    with pytest.raises(RuntimeError):
        idempotent(principal=cast.p_owner, key="k", operation="op", body={}, run=boom)
    assert not IdempotentRequest.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_second_request_while_the_first_runs_is_a_409_in_progress_and_then_a_replay(cast):
    """Deterministic: the first request's write waits until the second has been answered."""
    calls, count = _counter()
    running, answered = threading.Event(), threading.Event()
    outcome = {}

    def slow_write():
        running.set()
        assert answered.wait(timeout=30)
        return count()

    def first():
        try:
            outcome["first"] = idempotent(principal=cast.p_owner, key="k", operation="op", body={}, run=slow_write)
        finally:
            connection.close()

    thread = threading.Thread(target=first)
    thread.start()
    assert running.wait(timeout=30)
    with pytest.raises(Conflict, match="in progress"):
        idempotent(principal=cast.p_owner, key="k", operation="op", body={}, run=count)
    answered.set()
    thread.join(timeout=30)
    replay = idempotent(principal=cast.p_owner, key="k", operation="op", body={}, run=count)
    assert len(calls) == 1
    assert outcome["first"][0] == replay[0] == 201 and replay[1]["n"] == 1


def test_a_claim_left_in_progress_by_a_dead_process_is_taken_over(cast):
    IdempotentRequest.objects.create(principal_key=f"u{cast.owner.pk}", key="k", operation="op", body_hash="x",
                                     created_at=timezone.now() - timedelta(hours=1))
    calls, run = _counter()
    idempotent(principal=cast.p_owner, key="k", operation="op", body={}, run=run)
    assert len(calls) == 1
