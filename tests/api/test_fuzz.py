"""The API fuzzed from its own OpenAPI schema (schemathesis, in-process through Django's WSGI
handler on the test database): no operation answers 500, and every response has a documented
status and a body that fits the schema, with a read+write token on a scope holding an episode,
its facts and entities, and without a token (all 401).

Bounded and reproducible: a fixed number of examples per operation, derandomized, no deadline."""

from datetime import date

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance, response_schema_conformance, status_code_conformance,
)

from memories.models import Entity, Episode, Fact
from memories.services.facts import fact_retract
from memories.services.ingest import remember

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", WSGIHandler())

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
FUZZ = hypothesis_settings(
    max_examples=30, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)

# The ids of the rows `world` stored for the running test: path parameters are drawn from these
# as well as from the fuzzer, so operations are exercised past their 404s (and hit them).
REAL: dict[str, list[str]] = {}


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    if not REAL or not path_parameters:
        return st.just(path_parameters)
    real = st.fixed_dictionaries({name: st.sampled_from(REAL.get(name, [value])) for name, value in path_parameters.items()})
    return st.one_of(st.just(path_parameters), real, st.just({**path_parameters, "slug": REAL["slug"][0]}))


# Bodies that fit what the handlers accept, with any text in them, beside the fuzzer's own (which
# rarely get past validation): so the services meet odd but valid input too.
_text = st.text(max_size=40)
_words = st.text(min_size=1, max_size=40)
_date = st.one_of(st.none(), st.dates(min_value=date(1990, 1, 1), max_value=date(2024, 12, 31)).map(date.isoformat))
_message = st.fixed_dictionaries({"id": _words, "speaker": _text, "text": _words, "occurred_at": _date})
_recall = st.fixed_dictionaries({"query": _text, "k": st.integers(1, 200)}, optional={
    "speaker": _text, "as_of": _date, "include_history": st.booleans(),
    "filters": st.fixed_dictionaries({}, optional={
        "kinds": st.lists(st.sampled_from(["fact", "episode", "turn"]), unique=True), "speaker": _text, "since": _date,
        "until": _date,
    }),
})
VALID_BODIES = {
    "/scopes/{slug}/remember": st.fixed_dictionaries({"text": _words}, optional={"speaker": _text, "occurred_at": _date}),
    "/scopes/{slug}/sessions": st.fixed_dictionaries({
        "session_id": _words, "messages": st.lists(_message, min_size=1, max_size=3, unique_by=lambda m: m["id"]),
    }),
    "/scopes/{slug}/recall": _recall,
    "/scopes/{slug}/recall/evidence": _recall,
    "/scopes/{slug}/answer": st.fixed_dictionaries({"question": _text}, optional={"k": st.integers(1, 200), "speaker": _text}),
    "/scopes/{slug}/facts/{fact_id}/correct": st.fixed_dictionaries({}, optional={
        "value": _words, "sentence": st.one_of(st.none(), _words), "attribute": st.one_of(st.none(), _words),
    }),
    "/scopes/{slug}/facts/{fact_id}/retract": st.fixed_dictionaries({}, optional={"reason": _text}),
}


@schema.hook
def flatmap_body(context, body):
    valid = VALID_BODIES.get(context.operation.path.removeprefix("/api/v1"))
    return st.one_of(st.just(body), valid) if valid is not None else st.just(body)


@pytest.fixture
def world(cast, tokens, settings, django_capture_on_commit_callbacks):
    """In alpha: 'I moved from San Francisco to New York' remembered and extracted; an episode
    that failed; a retracted fact. Their ids go to REAL."""
    settings.MEMORYWEB_API_RATE = "100000/m"  # the fuzzer is one fast caller; 429 is not what is tested
    with django_capture_on_commit_callbacks(execute=True):
        moved = remember(scope=cast.scope_a, text="I moved from San Francisco to New York", actor=cast.p_owner, source="api")
        failed = remember(scope=cast.scope_a, text="I love chess", actor=cast.p_owner, source="api")
    Episode.objects.filter(public_id=failed.episodes[0].episode_id).update(status="failed", error="boom")
    retracted = Fact.objects.filter(status="active").exclude(attribute="lives_in").first()
    fact_retract(scope=cast.scope_a, fact_public_id=str(retracted.public_id), actor=cast.p_owner)
    REAL.update(
        slug=["alpha"], episode_id=[str(moved.episodes[0].episode_id), str(failed.episodes[0].episode_id)],
        fact_id=[str(Fact.objects.get(attribute="lives_in", status="active").public_id), str(retracted.public_id)],
        entity_id=[str(Entity.objects.get(name="New York").public_id)],
    )
    # Django's test client does this too: the handler's request signals would close the test's
    # connection (its transaction holds everything above).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield tokens
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
    REAL.clear()


@schema.parametrize()
@FUZZ
def test_no_operation_fails_or_leaves_its_schema_with_a_token(case, world):
    case.call_and_validate(headers={"Authorization": f"Bearer {world['rw']}"}, checks=CHECKS)


@schema.parametrize()
@hypothesis_settings(FUZZ, max_examples=10)  # refused before anything else is read: depth adds nothing
def test_every_operation_is_refused_without_a_token(case, world):
    case.headers = {key: value for key, value in (case.headers or {}).items() if key.lower() != "authorization"}
    response = case.call_and_validate(checks=CHECKS)
    # The coverage phase also sends methods the path does not have (TRACE …): 405 before auth.
    expected = 401 if case.method.upper() == case.operation.method.upper() else 405
    assert response.status_code == expected, (case.method, case.path, response.text)


def test_an_import_with_a_broken_multipart_body_is_a_400_not_a_500(world, client):
    # Found by the fuzzer: a multipart Content-Type without a boundary.
    response = client.post("/api/v1/scopes/alpha/import", data=b"x", content_type="multipart/form-data",
                           headers={"Authorization": f"Bearer {world['rw']}"})
    assert response.status_code == 400, response.content
    assert response.json()["status"] == response.status_code
