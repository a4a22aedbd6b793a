"""The fixed cast every door is tested with: an owner (admin of team A), an editor and a viewer
in team A, and an outsider who owns team B."""

import os

import pytest

from accounts.models import Role
from accounts.permissions import Principal
from accounts.services import membership_set, team_create, user_create
from memories.models import Scope


@pytest.fixture(scope="session", autouse=True)
def _servers_keep_their_admin_password_apart(tmp_path_factory):
    """A `serve` or `mcp` the suite starts on the test database creates its first admin there and
    writes the password file: into a directory of the run's own, not MEMORYWEB_HOME, whose file
    belongs to the install the tests run beside. Set after the settings were read, so only child
    processes see it (tests of the file itself move MEMORYWEB_HOME)."""
    os.environ["MEMORYWEB_ADMIN_PASSWORD_FILE"] = str(tmp_path_factory.mktemp("servers") / "admin-password")
    yield
    os.environ.pop("MEMORYWEB_ADMIN_PASSWORD_FILE", None)


@pytest.fixture(autouse=True)
def _fast_settings(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.EMBEDDER = "hash"
    settings.LLM_PROVIDER = "offline"
    # Calls made in the test's process are logged as they end, for the test to read at once; a
    # live server keeps its default (its rows come within MEMORYWEB_CALL_LOG_DELAY).
    settings.MEMORYWEB_CALL_LOG_DELAY = 0
    # No scope's conversation held in memory (retrieval/matrix.py), whose background build would read the
    # database from a thread of its own, outside the test's transaction; tests/retrieval/test_matrix.py
    # turns it on and builds in the test's thread.
    settings.RETRIEVAL_MATRIX_MB = 0


@pytest.fixture(autouse=True)
def _no_token_rows_kept_across_tests():
    """The token rows a process keeps for a second (accounts.tokens.token_row_recent) start empty in
    each test: a rolled-back test's scope could come back under the same slug with another id."""
    from accounts.lockout import token_lock_memo_clear
    from accounts.tokens import token_rows_recent_clear

    token_rows_recent_clear()
    token_lock_memo_clear()  # and the addresses found without a bad-token lock (accounts/lockout.py)
    yield
    token_rows_recent_clear()
    token_lock_memo_clear()


@pytest.fixture(autouse=True)
def _search_pool():
    """Searches outside a transaction use a second connection from a pool thread
    (retrieval/concurrent.py); it is closed after each test, or the test database could not be
    flushed or dropped while it is connected."""
    yield
    from retrieval import concurrent

    concurrent.shutdown()


class Cast:
    pass


@pytest.fixture
def cast(db):
    c = Cast()
    c.owner = user_create(username="owner", password="pw-owner-123")
    c.editor = user_create(username="editor", password="pw-editor-123")
    c.viewer = user_create(username="viewer", password="pw-viewer-123")
    c.outsider = user_create(username="outsider", password="pw-outsider-123")
    c.team_a = team_create(actor=None, slug="team-a", owner=c.owner)
    membership_set(team=c.team_a, user=c.editor, role=Role.EDITOR)
    membership_set(team=c.team_a, user=c.viewer, role=Role.VIEWER)
    c.team_b = team_create(actor=None, slug="team-b", owner=c.outsider)
    c.scope_a = Scope.objects.create(team=c.team_a, slug="alpha", name="Alpha")
    c.scope_a2 = Scope.objects.create(team=c.team_a, slug="alpha-two", name="Alpha two")
    c.scope_b = Scope.objects.create(team=c.team_b, slug="bravo", name="Bravo")
    c.p_owner = Principal(user=c.owner)
    c.p_editor = Principal(user=c.editor)
    c.p_viewer = Principal(user=c.viewer)
    c.p_outsider = Principal(user=c.outsider)
    return c
