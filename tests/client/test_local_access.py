"""serve's local access, in-process: the tokens it issues for the CLI user follow the scopes that
user may read and write, and a changed set replaces them (the old ones revoked)."""

import json
import os
import stat

import pytest

from accounts.models import ApiToken
from memoryweb import local_server
from memoryweb.management.local_access import TOKEN_NAME, _Keeper
from memories.models import Scope


@pytest.fixture
def keeper(cast, settings, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMORYWEB_SERVER_FILE", str(tmp_path / "server.json"))
    monkeypatch.setenv("MEMORYWEB_CLI_USER", "viewer")
    settings.MEMORYWEB_CLI_USER = "viewer"
    return _Keeper("http://127.0.0.1:8123")


def test_the_cli_users_tokens_follow_their_scopes(cast, keeper, tmp_path):
    keeper.refresh()
    info = json.loads((tmp_path / "server.json").read_text())
    assert stat.S_IMODE(os.stat(tmp_path / "server.json").st_mode) == 0o600
    assert info["tokens"]["read"]["scopes"] == ["alpha", "alpha-two"] and "write" not in info["tokens"]  # a viewer
    first = ApiToken.objects.get(prefix=info["tokens"]["read"]["prefix"])
    assert local_server.local_access(user=None, scope="alpha", access="read") == (keeper.url, info["tokens"]["read"]["token"])
    assert local_server.local_access(user=None, scope="alpha", access="write") is None

    Scope.objects.create(team=cast.team_a, slug="alpha-three", name="Alpha three")
    keeper.refresh()
    info = json.loads((tmp_path / "server.json").read_text())
    assert info["tokens"]["read"]["scopes"] == ["alpha", "alpha-three", "alpha-two"]
    first.refresh_from_db()
    assert first.revoked_at is not None and first.name == TOKEN_NAME

    keeper.refresh()  # nothing changed: the same token
    assert json.loads((tmp_path / "server.json").read_text())["tokens"]["read"]["prefix"] == info["tokens"]["read"]["prefix"]
    keeper.withdraw()
    assert not (tmp_path / "server.json").exists()
    assert not ApiToken.objects.filter(name=TOKEN_NAME, revoked_at=None).exists()


def test_a_server_file_for_another_database_is_ignored(cast, keeper, monkeypatch):
    keeper.refresh()
    monkeypatch.setenv("MEMORYWEB_DATABASE_NAME", "another")
    assert local_server.local_access(user=None, scope="alpha", access="read") is None


def test_memoryweb_home_is_read_as_the_settings_read_it(settings):
    assert local_server.memoryweb_home() == settings.MEMORYWEB_HOME
