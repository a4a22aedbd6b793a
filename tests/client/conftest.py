import pytest

from tests.integration.conftest import mcp_world  # noqa: F401  (the committed cast of the live-server tests)


@pytest.fixture(scope="module")
def server_file(tmp_path_factory):
    """Where the module's server advertises itself to the CLI (not the shared MEMORYWEB_HOME)."""
    return tmp_path_factory.mktemp("client-home") / "server.json"


@pytest.fixture(scope="module")
def server(mcp_world, server_file, tmp_path_factory):  # noqa: F811
    """A live `memoryweb serve` for the module, offering local access to the CLI as mcp-ada."""
    from tests.integration.mcp_world import live_server, server_env

    env = {**server_env(mcp_world), "MEMORYWEB_LOCAL_ACCESS": "true", "MEMORYWEB_SERVER_FILE": str(server_file),
           "MEMORYWEB_CLI_USER": "mcp-ada"}
    with live_server(env, tmp_path_factory.mktemp("client-serve")) as url:
        yield url


@pytest.fixture
def cli_env(monkeypatch, mcp_world, server_file):  # noqa: F811
    """This process's environment as a CLI next to the module's server: the same database, user and server file."""
    monkeypatch.setenv("MEMORYWEB_DATABASE_NAME", mcp_world.database)
    monkeypatch.setenv("MEMORYWEB_SERVER_FILE", str(server_file))
    monkeypatch.setenv("MEMORYWEB_CLI_USER", "mcp-ada")
    for name in ("MEMORYWEB_URL", "MEMORYWEB_TOKEN", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
