"""The bad-token and sign-in limits on a live `memoryweb serve` with two worker processes (on the
test database): bad tokens sent over the API and over MCP, to whichever worker takes each
connection, lock the address for both doors, and this test's process sees the same count."""

import re
import time

import httpx
import pytest

from accounts.lockout import _CLEAR_SECONDS, Locked, signin_check
from tests.integration.mcp_world import live_server, server_env, world_create, world_flush

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
FAILURES = 4
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"},
}}


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        created = world_create()
    yield created
    with django_db_blocker.unblock():
        world_flush()  # the server's failures too: no lock outlives the module


@pytest.fixture(scope="module")
def server(world, tmp_path_factory):
    env = {**server_env(world), "MEMORYWEB_WORKERS": "2", "MEMORYWEB_LOGIN_FAILURES": str(FAILURES)}
    with live_server(env, tmp_path_factory.mktemp("lockout-live")) as url:
        yield url


def api(url: str, token: str) -> httpx.Response:
    # A new connection each time, so the two workers share the requests.
    return httpx.get(f"{url}/api/v1/scopes", headers={"Authorization": f"Bearer {token}", "Connection": "close"}, timeout=30)


def mcp(url: str, token: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream", "Connection": "close"}
    return httpx.post(f"{url}/mcp", json=INITIALIZE, headers=headers, timeout=30)


def test_bad_tokens_over_the_api_and_mcp_lock_the_address_in_every_worker(server, world, settings):
    assert api(server, world.tokens["read"]).status_code == 200
    assert [api(server, "mw_bad_guess").status_code for _ in range(2)] == [401, 401]
    assert mcp(server, "mw_bad_guess").status_code == 401
    locked = mcp(server, "mw_bad_guess_again")
    assert locked.status_code == 429 and locked.json()["code"] == "too_many_requests"
    assert 14 * 60 < int(locked.headers["Retry-After"]) <= 15 * 60
    # A worker that let the valid token through just before may keep the address as clear for
    # _CLEAR_SECONDS (one read fewer per call); after that, every worker refuses it.
    time.sleep(_CLEAR_SECONDS + 0.2)
    refused = [api(server, world.tokens["read"]) for _ in range(4)]  # whichever worker answers
    assert {r.status_code for r in refused} == {429} and all(r.headers["Retry-After"] for r in refused)
    assert mcp(server, world.tokens["read"]).status_code == 429


def test_failed_sign_ins_on_the_live_server_lock_the_account_here(server, world, settings):
    settings.MEMORYWEB_LOGIN_FAILURES = FAILURES
    statuses = []
    for _ in range(FAILURES):
        with httpx.Client(base_url=server, timeout=30) as client:
            form = client.get("/login/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
            answer = client.post("/login/", data={"username": "mcp-otto", "password": "wrong", "csrfmiddlewaretoken": token},
                                 headers={"Connection": "close"})
            statuses.append(answer.status_code)
    assert statuses == [200] * (FAILURES - 1) + [429]
    assert "try again in 15 minutes" in answer.text
    with pytest.raises(Locked):  # this process reads the same count
        signin_check(username="mcp-otto", address="192.0.2.1")
