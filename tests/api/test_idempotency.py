"""Idempotency-Key on the API's writes: a retry gets the first answer and writes nothing; another
request under the key is a 409; keys are per caller; a concurrent pair writes once."""

import threading

import pytest
from django.db import connection

from accounts.models import AuditEvent, IdempotentRequest
from memories.models import Episode, Fact, FactStatus
from tests.api.conftest import Api

KEY = {"Idempotency-Key": "9f0c2a71-remember-oslo"}


def test_the_same_key_twice_writes_once_and_answers_the_same(api):
    first = api.post("/scopes/alpha/remember", {"text": "I moved to Oslo", "speaker": "ada"}, headers=KEY)
    # The same request, its fields in another order and a default spelled out: still the same request.
    again = api.post("/scopes/alpha/remember", {"speaker": "ada", "text": "I moved to Oslo", "session_id": None}, headers=KEY)
    assert first.status_code == again.status_code == 202
    assert again.json() == first.json()
    assert Episode.objects.count() == 1


def test_without_a_key_each_request_writes(api):
    api.post("/scopes/alpha/remember", {"text": "I moved to Oslo"})
    api.post("/scopes/alpha/remember", {"text": "I moved to Oslo"})
    assert Episode.objects.count() == 2
    assert not IdempotentRequest.objects.exists()


def test_the_key_with_another_body_or_operation_is_a_409(api):
    api.post("/scopes/alpha/remember", {"text": "I moved to Oslo"}, headers=KEY)
    other_body = api.post("/scopes/alpha/remember", {"text": "I moved to Rome"}, headers=KEY)
    other_scope = api.post("/scopes/alpha-two/remember", {"text": "I moved to Oslo"}, headers=KEY)
    other_operation = api.post("/scopes/alpha/sessions", {"session_id": "s", "messages": [{"id": "1", "text": "hi"}]}, headers=KEY)
    for response in (other_body, other_operation):
        assert response.status_code == 409 and response.json()["code"] == "conflict"
        assert "was used for another request" in response.json()["message"]
    assert other_scope.status_code in (404, 409)  # the rw token cannot see alpha-two; either way nothing written
    assert Episode.objects.count() == 1


def test_a_correction_retried_with_its_key_is_made_once(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        api.post("/scopes/alpha/remember", {"text": "I moved from San Francisco to New York", "speaker": "ada"})
    fact = Fact.objects.get(attribute="lives_in", status=FactStatus.ACTIVE)
    key = {"Idempotency-Key": "correct-1"}
    first = api.post(f"/scopes/alpha/facts/{fact.public_id}/correct", {"value": "Brooklyn"}, headers=key)
    again = api.post(f"/scopes/alpha/facts/{fact.public_id}/correct", {"value": "Brooklyn"}, headers=key)
    assert first.status_code == again.status_code == 200 and again.json() == first.json()
    assert AuditEvent.objects.filter(action="fact.correct").count() == 1
    assert Fact.objects.filter(value="Brooklyn").count() == 1


def test_a_forget_retried_with_its_key_returns_the_same_receipt(api):
    episode = api.post("/scopes/alpha/remember", {"text": "My locker code is 4711"}).json()["episodes"][0]["episode_id"]
    key = {"Idempotency-Key": "forget-1"}
    first = api.delete(f"/scopes/alpha/episodes/{episode}", headers=key)
    again = api.delete(f"/scopes/alpha/episodes/{episode}", headers=key)
    assert first.status_code == again.status_code == 200 and again.json() == first.json()
    without = api.delete(f"/scopes/alpha/episodes/{episode}")
    assert without.status_code == 404  # a retry without its key would have been refused


def test_two_callers_with_the_same_key_both_write(cast, tokens, api):
    both = Api(tokens["both"])  # another token of the same user: its own keys
    session = Api()
    session.client.force_login(cast.owner)  # the user without a token: its own keys too
    for caller in (api, both, session):
        assert caller.post("/scopes/alpha/remember", {"text": "I moved to Oslo"}, headers=KEY).status_code == 202
    assert Episode.objects.count() == 3
    assert IdempotentRequest.objects.count() == 3


def test_a_refused_or_failed_write_keeps_no_key(cast, tokens, api):
    read_only = Api(tokens["ro"])
    assert read_only.post("/scopes/alpha/remember", {"text": "I moved to Oslo"}, headers=KEY).status_code == 403
    assert api.post("/scopes/alpha/remember", {"text": "   "}, headers=KEY).status_code == 422
    assert not IdempotentRequest.objects.exists()
    # The key is free for the corrected request.
    assert api.post("/scopes/alpha/remember", {"text": "I moved to Oslo"}, headers=KEY).status_code == 202


@pytest.mark.parametrize("key", ["", "has space", "x" * 256])
def test_a_malformed_key_is_refused(api, key):
    response = api.post("/scopes/alpha/remember", {"text": "I moved to Oslo"}, headers={"Idempotency-Key": key})
    assert response.status_code == 422, response.json()
    assert not Episode.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_concurrent_pair_with_one_key_writes_once(cast, tokens):
    """Two threads (two connections) send the same keyed write at once: one writes; the other
    gets the first answer, or a 409 "in progress" if it came while the first was running."""
    start = threading.Barrier(2)
    responses = []

    def send():
        try:
            start.wait(timeout=10)
            responses.append(Api(tokens["rw"]).post("/scopes/alpha/remember", {"text": "I moved to Oslo"}, headers=KEY))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    statuses = sorted(r.status_code for r in responses)
    assert statuses in ([202, 202], [202, 409]), [r.json() for r in responses]
    if statuses == [202, 202]:
        assert responses[0].json() == responses[1].json()
    else:
        assert "in progress" in next(r for r in responses if r.status_code == 409).json()["message"]
    assert Episode.objects.count() == 1
