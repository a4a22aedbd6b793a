"""Failed sign-ins limited per account and per client address, bad API tokens per address
(accounts/lockout.py), on the test database."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.lockout import client_address
from accounts.models import AuditEvent, SignInFailure
from accounts.tokens import token_issue

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.MEMORYWEB_LOGIN_FAILURES = 3
    settings.MEMORYWEB_LOGIN_WINDOW_MINUTES = 15


def from_address(address: str) -> Client:
    return Client(REMOTE_ADDR=address)


def sign_in(client: Client, username: str, password: str):
    return client.post("/login/", {"username": username, "password": password})


def test_an_account_is_locked_after_its_failures_even_for_the_right_password_and_from_elsewhere(cast):
    for n in range(2):
        assert sign_in(from_address(f"10.0.0.{n}"), "owner", "wrong").status_code == 200
    third = sign_in(from_address("10.0.0.2"), "Owner", "wrong")  # the name as typed, any case
    assert third.status_code == 429 and third["Retry-After"] == str(15 * 60)
    assert "Too many failed sign-ins: try again in 15 minutes." in third.content.decode()
    refused = sign_in(from_address("10.0.0.9"), "owner", "pw-owner-123")
    assert refused.status_code == 429 and "_auth_user_id" not in refused.wsgi_request.session
    assert sign_in(from_address("10.0.0.9"), "editor", "pw-editor-123").status_code == 302  # other accounts sign in
    event = AuditEvent.objects.get(action="signin.locked", target_type="account")
    assert event.target_id == "owner" and event.actor_label == "system" and event.after["failures"] == 3


def test_an_address_is_locked_after_its_failures_whatever_the_account(cast):
    client = from_address("10.1.0.1")
    assert sign_in(client, "owner", "wrong").status_code == 200
    assert sign_in(client, "editor", "wrong").status_code == 200
    assert sign_in(client, "no-such-user", "wrong").status_code == 429
    assert sign_in(client, "viewer", "pw-viewer-123").status_code == 429
    assert AuditEvent.objects.filter(action="signin.locked", target_type="address", target_id="10.1.0.1").count() == 1
    assert sign_in(from_address("10.1.0.2"), "viewer", "pw-viewer-123").status_code == 302


def test_a_success_clears_the_failures(cast):
    client = from_address("10.2.0.1")
    for _ in range(2):
        sign_in(client, "owner", "wrong")
    assert sign_in(client, "owner", "pw-owner-123").status_code == 302
    client.logout()
    for _ in range(2):
        assert sign_in(client, "owner", "wrong").status_code == 200
    assert not AuditEvent.objects.filter(action="signin.locked").exists()


def test_the_lock_ends_when_the_failures_leave_the_window(cast):
    client = from_address("10.3.0.1")
    for _ in range(3):
        sign_in(client, "owner", "wrong")
    assert sign_in(client, "owner", "pw-owner-123").status_code == 429
    SignInFailure.objects.update(at=timezone.now() - timedelta(minutes=14))
    assert "1 minute." in sign_in(client, "owner", "pw-owner-123").content.decode()
    SignInFailure.objects.update(at=timezone.now() - timedelta(minutes=15, seconds=1))
    assert sign_in(client, "owner", "pw-owner-123").status_code == 302


def test_a_form_without_a_password_is_not_a_guess(cast):
    client = from_address("10.4.0.1")
    for _ in range(5):
        assert client.post("/login/", {"username": "owner"}).status_code == 200
    assert not SignInFailure.objects.exists()


def test_the_admin_login_is_limited_too(cast):
    client = from_address("10.5.0.1")
    for _ in range(2):
        assert client.post("/admin/login/", {"username": "owner", "password": "wrong"}).status_code == 200
    assert client.post("/admin/login/", {"username": "owner", "password": "wrong"}).status_code == 429


def test_x_forwarded_for_counts_only_behind_a_proxy(settings):
    assert client_address("10.0.0.1", "6.6.6.6") == "10.0.0.1"
    settings.MEMORYWEB_BEHIND_PROXY = True
    assert client_address("10.0.0.1", "6.6.6.6, 203.0.113.7") == "203.0.113.7"  # the address our proxy added
    assert client_address("10.0.0.1", None) == "10.0.0.1"


def test_forged_forwarded_for_does_not_escape_the_address_lock(cast):
    for n in range(3):
        Client(REMOTE_ADDR="10.6.0.1", HTTP_X_FORWARDED_FOR=f"1.2.3.{n}").post("/login/", {"username": f"u{n}", "password": "x"})
    assert sign_in(from_address("10.6.0.1"), "owner", "pw-owner-123").status_code == 429


def test_bad_api_tokens_lock_the_address_with_a_429_json_and_retry_after(cast):
    secret = token_issue(actor=cast.p_owner, user=cast.owner, name="t", scopes=[cast.scope_a], can_write=False).secret
    client = from_address("10.7.0.1")
    for _ in range(2):
        assert client.get("/api/v1/scopes", headers={"Authorization": "Bearer mw_wrong_guess"}).status_code == 401
    assert client.get("/api/v1/scopes", headers={"Authorization": f"Bearer {secret}"}).status_code == 200  # resets nothing
    third = client.get("/api/v1/scopes", headers={"Authorization": f"Bearer {secret[:-2]}xx"})
    assert third.status_code == 429 and int(third["Retry-After"]) == 15 * 60
    assert third.json()["code"] == "too_many_requests" and "Too many bad API tokens" in third.json()["message"]
    # While locked, even a right token from there is refused (else guessing would go on), not from elsewhere.
    assert client.get("/api/v1/scopes", headers={"Authorization": f"Bearer {secret}"}).status_code == 429
    assert from_address("10.7.0.2").get("/api/v1/scopes", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    assert AuditEvent.objects.filter(action="token.locked", target_id="10.7.0.1").count() == 1


@pytest.mark.django_db(transaction=True)  # the other process's rows are committed: flushed afterwards
def test_failures_another_process_counted_lock_this_one(cast):
    """The count is the database's: failures recorded by a separate Python process lock the
    account and the address here."""
    code = (
        "import django; django.setup()\n"
        "from accounts.lockout import signin_failed\n"
        "for _ in range(3): signin_failed(username='owner', address='10.8.0.1')\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryweb.settings", "MEMORYWEB_DATABASE_NAME": connection.settings_dict["NAME"],
           "MEMORYWEB_LOGIN_FAILURES": "3"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert sign_in(from_address("10.8.0.2"), "owner", "pw-owner-123").status_code == 429  # the account
    assert sign_in(from_address("10.8.0.1"), "editor", "pw-editor-123").status_code == 429  # the address
    assert sign_in(from_address("10.8.0.2"), "editor", "pw-editor-123").status_code == 302
