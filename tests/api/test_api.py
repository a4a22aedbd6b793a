"""API v1: the happy paths an agent takes, and bad input answered with the right status."""

import pytest
from django.core.cache import cache

from accounts.models import AuditEvent
from memories.models import Episode, Fact, FactStatus
from tests.api.conftest import Api


@pytest.fixture
def stored(api, django_capture_on_commit_callbacks):
    """'I moved from San Francisco to New York', extracted (the offline extractor), in alpha."""
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/scopes/alpha/remember", {"text": "I moved from San Francisco to New York", "speaker": "ada"})
    assert response.status_code == 202, response.json()
    episode_id = response.json()["episodes"][0]["episode_id"]
    return {"episode_id": episode_id, "fact": Fact.objects.get(attribute="lives_in", status=FactStatus.ACTIVE)}


def test_remember_then_the_episode_shows_its_extracted_facts(api, stored):
    body = api.get(f"/scopes/alpha/episodes/{stored['episode_id']}").json()
    assert body["status"] == "done" and body["source"] == "api"
    assert {(f["attribute"], f["value"]) for f in body["facts"]} >= {("lives_in", "New York")}


def test_recall_and_answer_cite_ids_lanes_and_intervals(api, stored):
    body = api.post("/scopes/alpha/recall", {"query": "where does ada live?", "speaker": "ada"}).json()
    top = body["results"][0]
    assert top["kind"] == "fact" and top["value"] == "New York" and set(top["lanes"]) == {"similarity", "importance", "recency"}
    assert top["valid_from"] is not None and top["valid_to"] is None
    evidence = api.post("/scopes/alpha/recall/evidence", {"query": "San Francisco"}).json()
    assert any(item["source"]["episode"] == stored["episode_id"] for item in evidence["results"])
    reply = api.post("/scopes/alpha/answer", {"question": "Where do I live?", "speaker": "ada"}).json()
    assert "New York" in reply["answer"] and reply["evidence"]


def test_history_and_the_fact_chain_show_what_was_true_when(api, stored):
    history = api.get("/scopes/alpha/history", entity="ada", attribute="lives_in").json()
    assert [(f["value"], f["status"]) for f in history] == [("San Francisco", "superseded"), ("New York", "active")]
    chain = api.get(f"/scopes/alpha/facts/{stored['fact'].public_id}").json()["chain"]
    assert [f["value"] for f in chain] == ["San Francisco", "New York"]


def test_entities_are_searched_by_name_and_paginated(api, stored):
    page = api.get("/scopes/alpha/entities", q="york", limit=1).json()
    assert page["count"] == 1 and page["items"][0]["name"] == "New York"
    everyone = api.get("/scopes/alpha/entities", limit=1, offset=0).json()
    assert everyone["count"] >= 3 and len(everyone["items"]) == 1
    ada = next(e for e in api.get("/scopes/alpha/entities", q="ada").json()["items"])
    detail = api.get(f"/scopes/alpha/entities/{ada['id']}").json()
    assert [f["value"] for f in detail["facts"] if f["attribute"] == "lives_in"] == ["New York"]


def test_correct_retract_and_restore_are_audited(api, stored):
    fact_id = stored["fact"].public_id
    corrected = api.post(f"/scopes/alpha/facts/{fact_id}/correct", {"value": "Brooklyn"}).json()
    assert corrected["value"] == "Brooklyn" and corrected["provenance"] == "manual" and corrected["author"] == "owner"
    assert api.post(f"/scopes/alpha/facts/{corrected['id']}/retract", {"reason": "wrong"}).json()["status"] == "retracted"
    assert api.post(f"/scopes/alpha/facts/{corrected['id']}/restore").json()["status"] == "active"
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"fact.correct", "fact.retract", "fact.restore"} <= actions
    assert AuditEvent.objects.filter(action="fact.correct").get().actor_token is not None


def test_a_session_is_ingested_once(api):
    body = {"session_id": "s1", "messages": [
        {"id": "t1", "speaker": "ada", "text": "I love chess", "occurred_at": "2025-01-02"},
        {"id": "t2", "speaker": "bo", "text": "nice"},
    ]}
    first = api.post("/scopes/alpha/sessions", body).json()
    again = api.post("/scopes/alpha/sessions", body).json()
    assert (first["created"], again["created"], again["skipped"]) == (2, 0, 2)
    assert Episode.objects.count() == 2


def test_a_failed_episode_is_retried_and_a_done_one_is_a_conflict(api, stored):
    Episode.objects.filter(public_id=stored["episode_id"]).update(status="failed", error="boom")
    assert api.post(f"/scopes/alpha/episodes/{stored['episode_id']}/retry").status_code == 202
    Episode.objects.filter(public_id=stored["episode_id"]).update(status="done")
    response = api.post(f"/scopes/alpha/episodes/{stored['episode_id']}/retry")
    assert response.status_code == 409 and response.json()["code"] == "conflict"


def test_scopes_lists_only_the_callers(tokens):
    body = Api(tokens["both"]).get("/scopes").json()
    assert [(s["slug"], s["can_write"]) for s in body["items"]] == [("alpha", True), ("alpha-two", True)]
    assert [s["slug"] for s in Api(tokens["ro"]).get("/scopes").json()["items"]] == ["alpha"]


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"text": ""}, 422, None),
    ({"text": "   "}, 422, None),
    ({"text": 5}, 422, "text"),
    ({}, 422, "text"),
    ({"text": "hi", "occurred_at": "yesterday-ish"}, 422, None),
    ({"text": "hi", "occurred_at": "2999-01-01"}, 422, None),
    ({"text": "x" * 40_000}, 413, None),
    ([1, 2], 422, None),
])
def test_bad_input_gets_a_clear_4xx_and_writes_nothing(api, body, status, field):
    response = api.post("/scopes/alpha/remember", body)
    assert response.status_code == status, response.json()
    error = response.json()
    assert error["status"] == status and error["message"]
    if field:
        assert field in [e["field"] for e in error["errors"]]
    assert not Episode.objects.exists()


def test_malformed_json_and_a_huge_body(api, settings):
    response = api.post("/scopes/alpha/remember", raw='{"text": "unterminated')
    assert response.status_code == 400 and response.json()["code"] == "bad_request"
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    response = api.post("/scopes/alpha/remember", {"text": "x" * 10_000})
    assert response.status_code == 413 and response.json()["code"] == "too_large"
    assert not Episode.objects.exists()


@pytest.mark.parametrize("path", ["/scopes/alpha/episodes/not-a-uuid", "/scopes/alpha/facts/00000000-0000-0000-0000-000000000000",
                                  "/scopes/alpha/entities/00000000-0000-0000-0000-000000000000", "/scopes/nope/entities"])
def test_unknown_ids_are_404(api, path):
    response = api.get(path)
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_recall_validates_its_arguments(api):
    assert api.post("/scopes/alpha/recall", {"query": "x", "k": 0}).status_code == 422
    assert api.post("/scopes/alpha/recall", {"query": ""}).status_code == 422
    assert api.post("/scopes/alpha/recall", {"query": "x", "as_of": "someday"}).status_code == 422
    assert api.post("/scopes/alpha/recall", {"query": "x", "filters": {"kinds": ["nonsense"]}}).status_code == 422


def test_too_many_requests_is_429_with_retry_after(api, settings):
    cache.clear()
    settings.MEMORYWEB_API_RATE = "3/m"
    statuses = [api.get("/scopes").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    response = api.get("/scopes")
    # When the window allows one more (tests/api/test_throttle.py): within the minute, plus the
    # third of it over which the three slide out of the sliding window's estimate.
    assert response.json()["code"] == "too_many_requests" and 1 <= int(response["Retry-After"]) <= 80
    cache.clear()


def test_the_openapi_schema_and_docs_are_served(client):
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/scopes/{slug}/recall" in schema["paths"]
    assert schema["components"]["securitySchemes"]
    assert client.get("/api/v1/docs").status_code == 200


def test_forget_erases_the_episode_and_returns_a_receipt(api, stored):
    response = api.delete(f"/scopes/alpha/episodes/{stored['episode_id']}")
    assert response.status_code == 200, response.json()
    receipt = response.json()
    assert receipt["episode_id"] == stored["episode_id"] and receipt["counts"]["episodes"] == 1
    assert api.get(f"/scopes/alpha/episodes/{stored['episode_id']}").status_code == 404
    assert api.delete(f"/scopes/alpha/episodes/{stored['episode_id']}").status_code == 404
    found = api.post("/scopes/alpha/recall/evidence", {"query": "San Francisco New York"}).json()["results"]
    assert not any("San Francisco" in item["text"] for item in found)
    assert api.get("/scopes/alpha/entities", q="york").json()["count"] == 0
