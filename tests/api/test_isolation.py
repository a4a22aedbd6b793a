"""Every API operation × every kind of caller that must be refused: the right status, and no row changed."""

from datetime import timedelta

import pytest
from django.apps import apps
from django.conf import settings
from django.test import Client
from django.utils import timezone

from accounts.models import ApiCall, ApiToken, SignInFailure
from accounts.tokens import token_issue
from memories.models import Entity, Fact, FactStatus
from tests.api.conftest import Api

# (method, path, body, writes). {episode}, {fact} and {entity} are alpha's rows. "admin": an
# admin-only read, refused like a write (403 for those who may read the scope, 404 for others).
OPERATIONS = [
    ("get", "/scopes/alpha/episodes/{episode}", None, False),
    ("get", "/scopes/alpha/entities", None, False),
    ("get", "/scopes/alpha/entities/{entity}", None, False),
    ("get", "/scopes/alpha/facts/{fact}", None, False),
    ("get", "/scopes/alpha/facts?entity=ada&history=true", None, False),
    ("get", "/scopes/alpha/history?entity=ada", None, False),
    ("post", "/scopes/alpha/recall", {"query": "where does ada live"}, False),
    ("post", "/scopes/alpha/recall/evidence", {"query": "where does ada live"}, False),
    ("post", "/scopes/alpha/answer", {"question": "where does ada live?"}, False),
    ("post", "/scopes/alpha/remember", {"text": "I moved to Oslo"}, True),
    ("post", "/scopes/alpha/sessions", {"session_id": "s", "messages": [{"id": "1", "text": "I moved to Oslo"}]}, True),
    ("post", "/scopes/alpha/episodes/{episode}/retry", None, True),
    ("post", "/scopes/alpha/facts/{fact}/correct", {"value": "Oslo"}, True),
    ("post", "/scopes/alpha/facts/{fact}/retract", {"reason": "x"}, True),
    ("post", "/scopes/alpha/facts/{fact}/restore", None, True),
    ("delete", "/scopes/alpha/episodes/{episode}", None, True),
    ("get", "/scopes/alpha/log", None, "admin"),
    # Team admins only, so refused like writes (and to every token).
    ("get", "/scopes/alpha/export", None, True),
    ("post", "/scopes/alpha/import", None, True),
]


@pytest.fixture
def rows(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        body = api.post("/scopes/alpha/remember", {"text": "I moved from San Francisco to New York", "speaker": "ada"}).json()
    return {
        "episode": body["episodes"][0]["episode_id"],
        "fact": str(Fact.objects.get(attribute="lives_in", status=FactStatus.ACTIVE).public_id),
        "entity": str(Entity.objects.get(name="ada").public_id),
    }


def _callers(cast, tokens) -> dict:
    """Each refused caller: a client and the status expected for reads and for writes."""
    revoked = token_issue(actor=cast.p_owner, user=cast.owner, name="revoked", scopes=[cast.scope_a], can_write=True)
    ApiToken.objects.filter(pk=revoked.token.pk).update(revoked_at=timezone.now())
    expired = token_issue(actor=cast.p_owner, user=cast.owner, name="expired", scopes=[cast.scope_a], can_write=True,
                          expires_at=timezone.now() + timedelta(hours=1))
    ApiToken.objects.filter(pk=expired.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    viewer_session, outsider_session = Client(), Client()
    viewer_session.force_login(cast.viewer)
    outsider_session.force_login(cast.outsider)
    wrong = tokens["rw"][:-4] + ("aaaa" if not tokens["rw"].endswith("aaaa") else "bbbb")
    return {
        "no token": (Api(), 401, 401),
        "malformed token": (Api("not-a-token"), 401, 401),
        "wrong secret": (Api(wrong), 401, 401),
        "revoked token": (Api(revoked.secret), 401, 401),
        "expired token": (Api(expired.secret), 401, 401),
        "read-only token": (Api(tokens["ro"]), None, 403),
        "another scope's token": (Api(tokens["outsider"]), 404, 404),
        "viewer's session": (_session(viewer_session), None, 403),
        "another team's user": (_session(outsider_session), 404, 404),
    }


def _call(caller: Api, method: str, path: str, body):
    return caller.get(path) if method == "get" else caller.delete(path) if method == "delete" else caller.post(path, body)


def _session(client: Client) -> Api:
    session = Api()
    session.client = client
    return session


def _counts() -> dict:
    # The caller log records a refusal (checked below) and a bad token is counted against its
    # address (accounts/lockout.py): the only tables a refused call writes.
    return {model._meta.label: model.objects.count() for app in ("accounts", "memories", "retrieval")
            for model in apps.get_app_config(app).get_models() if model not in (ApiCall, SignInFailure)}


def _state() -> list:
    return list(Fact.objects.order_by("pk").values_list("pk", "status", "value", "valid_to")) + [_counts()]


def test_every_operation_refuses_every_caller_it_must(cast, tokens, rows, settings):
    # Every operation gets each bad token from one address: more than the bad-token limit
    # (accounts/lockout.py, tested in tests/accounts/test_lockout*.py), whose 429 is not the point here.
    settings.MEMORYWEB_LOGIN_FAILURES = 10_000
    callers = _callers(cast, tokens)
    before = _state()
    logged_before = ApiCall.objects.count()
    calls = 0
    failures = []
    for name, (caller, read_status, write_status) in callers.items():
        for method, template, body, writes in OPERATIONS:
            expected = write_status if writes else read_status
            if expected is None:
                continue  # a read the caller may make
            path = template.format(**rows)
            response = _call(caller, method, path, body)
            calls += 1
            if response.status_code != expected or response.json().get("status") != expected:
                failures.append(f"{name}: {method.upper()} {path} → {response.status_code}, expected {expected}")
    assert not failures, "\n".join(failures)
    assert _state() == before
    refused = ApiCall.objects.order_by("-id")[: ApiCall.objects.count() - logged_before]
    assert len(refused) == calls and all(call.status in (401, 403, 404) for call in refused)


def test_the_allowed_reads_of_a_read_only_token_and_a_viewer_succeed(cast, tokens, rows):
    callers = _callers(cast, tokens)
    for name in ("read-only token", "viewer's session"):
        caller = callers[name][0]
        for method, template, body, writes in OPERATIONS:
            if writes:
                continue
            path = template.format(**rows)
            response = _call(caller, method, path, body)
            assert response.status_code == 200, (name, path, response.json())


def test_another_scopes_row_is_indistinguishable_from_a_missing_one(cast, tokens, rows):
    outsider = Api(tokens["outsider"])
    # The outsider's own scope, asked for alpha's fact: the same 404 as for an id that never existed.
    seen = outsider.get(f"/scopes/bravo/facts/{rows['fact']}").json()
    never = outsider.get("/scopes/bravo/facts/00000000-0000-0000-0000-000000000000").json()
    assert seen["status"] == never["status"] == 404
    assert seen["message"].replace(rows["fact"], "ID") == never["message"].replace("00000000-0000-0000-0000-000000000000", "ID")


def test_a_browser_write_needs_the_csrf_token(cast):
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.owner)
    response = client.post("/api/v1/scopes/alpha/remember", {"text": "hi"}, content_type="application/json")
    assert response.status_code == 403 and "CSRF" in response.json()["message"]
    assert not apps.get_model("memories", "Episode").objects.exists()


@pytest.mark.parametrize("cookie", [None, "", "not-a-session"])
def test_a_write_without_a_token_is_a_401_even_where_csrf_is_enforced(cast, cookie):
    # A real server enforces CSRF (the test client normally skips it): a request no session signs
    # in must still get the missing token's 401, not a 403 from a CSRF check that protects nothing.
    client = Client(enforce_csrf_checks=True)
    if cookie is not None:
        client.cookies[settings.SESSION_COOKIE_NAME] = cookie
    response = client.post("/api/v1/scopes/alpha/remember", {"text": "hi"}, content_type="application/json")
    assert response.status_code == 401 and response.json()["code"] == "unauthorized"
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert client.delete("/api/v1/scopes/alpha/episodes/00000000-0000-0000-0000-000000000000").status_code == 401
