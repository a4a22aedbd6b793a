import os

import pytest
import redis

REDIS_TEST_URL = os.environ.get("MEMORYWEB_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture(scope="session")
def redis_url():
    """Redis for queue tests. Skipped locally when absent; in CI (CI set) its absence is a failure."""
    try:
        redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Redis at {REDIS_TEST_URL} is unreachable in CI: {exc}")
        pytest.skip(f"Redis at {REDIS_TEST_URL} is unreachable: {exc}")
    return REDIS_TEST_URL


@pytest.fixture(scope="module")
def mcp_world(django_db_setup, django_db_blocker):
    """The MCP tests' cast, committed (their server runs in another process) once per module, and
    flushed after it. The modules using it mark their tests django_db, so the test database exists."""
    from tests.integration.mcp_world import world_create, world_flush

    with django_db_blocker.unblock():
        world = world_create()
    yield world
    with django_db_blocker.unblock():
        world_flush()
