"""The caller log's service and doors: recording, `memoryweb log`, pruning, and MCP calls."""

import io
import json
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from accounts.calllog import call_log_prune, call_record
from accounts.models import ApiCall, IdempotentRequest
from accounts.tokens import token_issue
from accounts.permissions import Principal
from memories.models import Episode
from tests.integration.workers import wait_for

pytestmark = pytest.mark.django_db


def _log(principal, status=200, slug="alpha", operation="POST /scopes/{slug}/recall", **kwargs):
    call_record(principal=principal, door="api", operation=operation, scope_slug=slug, status=status, latency_ms=1.5, **kwargs)


def call(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_memoryweb_log_shows_a_scope_calls_newest_first_to_its_admin(cast, capsys):
    _log(cast.p_editor, status=202, operation="POST /scopes/{slug}/remember")
    _log(None, status=401)
    _log(cast.p_owner, slug="bravo")  # another scope's call is not shown
    lines = call("log", "--scope", "alpha", "--as", "owner").splitlines()
    assert len(lines) == 2
    assert "401" in lines[0] and "(anonymous)" in lines[0] and "POST /scopes/{slug}/recall" in lines[0]
    assert "202" in lines[1] and "editor" in lines[1]
    assert len(call("log", "--scope", "alpha", "--limit", "1", "--as", "owner").splitlines()) == 1
    call("log", "--scope", "alpha", "--json", "--as", "owner")
    rows = json.loads(capsys.readouterr().out)
    assert [(r["user"], r["status"], r["scope"], r["door"]) for r in rows] == [(None, 401, "alpha", "api"), ("editor", 202, "alpha", "api")]
    later = (timezone.now() + timedelta(minutes=1)).isoformat()
    assert call("log", "--scope", "alpha", "--since", later, "--as", "owner") == "No calls logged for scope 'alpha'.\n"


def test_memoryweb_log_is_refused_to_a_non_admin(cast):
    with pytest.raises(CommandError, match="Only admins of team 'team-a'"):
        call("log", "--scope", "alpha", "--as", "editor")
    with pytest.raises(CommandError, match="No scope named 'alpha'"):
        call("log", "--scope", "alpha", "--as", "outsider")


def test_pruning_removes_old_calls_and_expired_keys_only(cast, settings):
    settings.MEMORYWEB_CALL_LOG_DAYS = 30
    now = timezone.now()
    for age in (timedelta(days=31), timedelta(days=29), timedelta(0)):
        _log(cast.p_owner)
        ApiCall.objects.filter(pk=ApiCall.objects.latest("id").pk).update(created_at=now - age)
    for key, age in (("old", timedelta(hours=25)), ("fresh", timedelta(hours=1))):
        IdempotentRequest.objects.create(principal_key="u1", key=key, operation="op", body_hash="x", created_at=now - age)
    assert call_log_prune(now=now) == {"calls": 1, "idempotency_keys": 1}
    assert sorted((now - c).days for c in ApiCall.objects.values_list("created_at", flat=True)) == [0, 29]
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["fresh"]
    assert call("log", "--prune", "--as", "owner") == "Pruned 0 call(s) and 0 idempotency key(s).\n"


def test_the_beat_schedule_prunes_the_log(settings):
    assert settings.CELERY_BEAT_SCHEDULE["prune-call-log"]["task"] == "accounts.prune_call_log"
    from accounts.tasks import prune_call_log

    assert prune_call_log.apply().get() == {"calls": 0, "idempotency_keys": 0}


# --- MCP, in-process: the tool runner that the HTTP and stdio transports call ------------------------

@pytest.fixture
def in_process_mcp(monkeypatch):
    """The tools close stale connections around each call, as Django does around a request; in a
    test's transaction that would close the test's own connection."""
    from memoryweb import mcp

    monkeypatch.setattr(mcp, "close_old_connections", lambda: None)


def _tool(name: str, principal: Principal | None, arguments: dict):
    from memoryweb import mcp

    async def call_tool():
        reset = mcp.current_principal.set(principal)
        try:
            return await mcp.server.call_tool(name, arguments)
        finally:
            mcp.current_principal.reset(reset)

    return async_to_sync(call_tool)()


def _text(result) -> str:
    blocks = result.content if hasattr(result, "content") else result
    return blocks[0].text


def test_mcp_remember_with_an_idempotency_key_twice_writes_once(cast, in_process_mcp):
    token = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a], can_write=True).token
    agent = Principal.for_token(token)
    arguments = {"scope": "alpha", "text": "I moved to Oslo", "speaker": "ada", "idempotency_key": "mcp-1"}
    first, again = _tool("remember", agent, dict(arguments)), _tool("remember", agent, dict(arguments))
    assert _text(again) == _text(first) and json.loads(_text(first))["scope"] == "alpha"
    assert Episode.objects.count() == 1
    other = _tool("remember", agent, {**arguments, "text": "I moved to Rome"})
    assert other.is_error and "was used for another request" in _text(other)
    _tool("remember", agent, {"scope": "alpha", "text": "I moved to Oslo"})  # no key: a new write
    assert Episode.objects.count() == 2


def test_mcp_calls_are_logged_refusals_too(cast, in_process_mcp):
    token = token_issue(actor=cast.p_owner, user=cast.owner, name="agent", scopes=[cast.scope_a]).token
    agent = Principal.for_token(token)
    _tool("recall", agent, {"scope": "alpha", "query": "Oslo"})
    _tool("remember", agent, {"scope": "alpha", "text": "I moved to Oslo"})  # a read-only token: refused
    _tool("list_scopes", agent, {})
    _tool("recall", None, {"scope": "alpha", "query": "Oslo"})
    calls = list(ApiCall.objects.order_by("id").values_list("door", "operation", "status", "scope_slug", "token_prefix"))
    assert calls == [
        ("mcp", "recall", 200, "alpha", token.prefix), ("mcp", "remember", 403, "alpha", token.prefix),
        ("mcp", "list_scopes", 200, "", token.prefix), ("mcp", "recall", 401, "alpha", ""),
    ]
    assert ApiCall.objects.filter(scope=cast.scope_a).count() == 3


@pytest.mark.django_db(transaction=True)
def test_a_call_outside_a_transaction_is_committed_at_once_without_slowing_the_connection_s_other_commits(cast):
    from django.db import connection

    _log(cast.p_owner)
    _log(None, slug="")
    assert not connection.in_atomic_block
    # Committed: another connection sees the rows, the scope found by its slug.
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")  # the log's own commit was asynchronous, this session's are not
        assert cursor.fetchone()[0] == "on"
    connection.close()
    assert list(ApiCall.objects.order_by("id").values_list("user_id", "scope_id", "scope_slug", "status")) == [
        (cast.owner.pk, cast.scope_a.pk, "alpha", 200), (None, None, "", 200),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_call_that_cannot_be_logged_leaves_the_connection_as_it_was(cast):
    """Begun, written and committed in one round trip: a failed INSERT (a status PostgreSQL's
    integer cannot hold) is rolled back, never raised, and the connection goes on, in autocommit."""
    from django.db import connection
    from psycopg.pq import TransactionStatus

    _log(cast.p_owner, status=2**40)
    assert connection.connection.info.transaction_status == TransactionStatus.IDLE and connection.get_autocommit()
    _log(cast.p_owner)
    assert list(ApiCall.objects.values_list("status", flat=True)) == [200]


def _writer_settled():
    """The writer thread woken and ended (it ends once a wait brought no calls)."""
    from accounts import calllog

    thread = calllog._writer.thread
    calllog._writer.settle()
    assert thread is None or not thread.is_alive(), "the caller log's writer thread did not end"


@pytest.mark.django_db(transaction=True)
def test_with_a_delay_a_process_writes_its_calls_together_and_its_writer_ends_when_they_stop(cast, settings):
    from django.db import connection

    from accounts import calllog

    settings.MEMORYWEB_CALL_LOG_DELAY = 1.0
    statements = []

    def counted(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    try:
        for status in (200, 404, 429):
            _log(cast.p_owner, status=status)
        recorded = timezone.now()
        assert not ApiCall.objects.exists()  # waiting for the writer
        writer = calllog._writer.thread
        assert writer is not None and writer.is_alive()
        with connection.execute_wrapper(counted):  # this thread's statements only: the writer has its own connection
            wait_for(lambda: ApiCall.objects.count() >= 3, timeout=10, interval=0.05)
        _writer_settled()
        assert list(ApiCall.objects.order_by("id").values_list("status", "scope_id")) == [
            (200, cast.scope_a.pk), (404, cast.scope_a.pk), (429, cast.scope_a.pk),
        ]
        assert not any("INSERT" in sql for sql in statements)
        assert all(when <= recorded for when in ApiCall.objects.values_list("created_at", flat=True))  # the call's time, not the write's
        # A call after the writer ended starts another.
        _log(cast.p_owner, status=201)
        assert calllog._writer.thread is not None and calllog._writer.thread is not writer
        _writer_settled()
        assert ApiCall.objects.filter(status=201).count() == 1
    finally:
        _writer_settled()


@pytest.mark.django_db(transaction=True)
def test_calls_waiting_for_the_writer_are_written_by_a_flush_in_one_statement(cast, settings):
    from django.db import connection

    from accounts.calllog import call_log_flush

    settings.MEMORYWEB_CALL_LOG_DELAY = 60  # the writer would wait a minute
    try:
        for slug in ("alpha", "bravo", "nowhere", ""):
            _log(cast.p_owner, slug=slug)
        inserts = []

        def counted(execute, sql, params, many, context):
            inserts.extend([sql] if "INSERT" in sql else [])
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counted):
            assert call_log_flush() == 4
        assert len(inserts) == 1
        assert list(ApiCall.objects.order_by("id").values_list("scope_slug", "scope_id")) == [
            ("alpha", cast.scope_a.pk), ("bravo", cast.scope_b.pk), ("nowhere", None), ("", None),
        ]
        assert call_log_flush() == 0
    finally:
        connection.close()
        _writer_settled()


@pytest.mark.django_db(transaction=True)
def test_a_batch_that_cannot_be_written_is_logged_and_the_next_one_is(cast, settings, caplog):
    from accounts.calllog import call_log_flush

    settings.MEMORYWEB_CALL_LOG_DELAY = 60

    try:
        _log(cast.p_owner, status=2**40)  # a status PostgreSQL's integer cannot hold: the batch fails
        assert call_log_flush() == 1
        assert "Could not write 1 calls to the caller log" in caplog.text
        _log(cast.p_owner)
        assert call_log_flush() == 1
        assert list(ApiCall.objects.values_list("status", flat=True)) == [200]
    finally:
        _writer_settled()
