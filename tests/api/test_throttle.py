"""The API's rate limit (memoryweb/throttle.py): a sliding window over two counters, atomic
increments, refused requests not counted, and an honest Retry-After."""

import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache import cache
from django.core.cache.backends.redis import RedisCache

from memoryweb.throttle import SlidingWindowThrottle, rate_parse


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


class Limit(SlidingWindowThrottle):
    def __init__(self, rate: str, clock: Clock):
        super().__init__(rate)
        self.timer = clock

    def get_cache_key(self, request):
        return request


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(params=["local memory", "redis"])
def shared(request):
    """The two caches a deployment counts in: this process's, or Redis for every process."""
    if request.param == "local memory":
        yield cache
        return
    # Keys of this test alone (never clear(): that empties the whole Redis database); they expire.
    yield RedisCache(os.environ.get("MEMORYWEB_TEST_REDIS_URL", "redis://127.0.0.1:6379/15"), {"KEY_PREFIX": uuid.uuid4().hex})


def test_rates_parse_and_nonsense_is_refused():
    assert rate_parse("600/m") == (600, 60) and rate_parse("5/sec") == (5, 1) and rate_parse("2/day") == (2, 86400)
    for bad in ("", "0/m", "10/week", "m/10", "10 /m"):
        with pytest.raises(ValueError, match="600/m"):
            rate_parse(bad)


def test_n_requests_pass_in_a_window_then_one_is_refused_and_retry_after_is_when_it_would_pass():
    clock = Clock(6000.0)  # the start of a window
    limit = Limit("3/m", clock)
    assert [limit.allow_request("a") for _ in range(4)] == [True, True, True, False]
    wait = limit.wait()
    # The three slide out of the estimate: at the next window's 20th second 3 × 2/3 + 1 fits.
    assert wait == pytest.approx(80.0)
    clock.now += wait - 0.5
    assert not limit.allow_request("a")
    clock.now += 0.5
    assert limit.allow_request("a") and limit.wait() is None
    assert limit.allow_request("b")  # another caller has its own count


def test_the_previous_window_counts_by_the_share_the_sliding_window_still_covers():
    clock = Clock(6000.0)
    limit = Limit("10/m", clock)
    assert all(limit.allow_request("a") for _ in range(10))
    clock.now = 6060.0 + 30  # halfway into the next window: the ten count as five
    assert [limit.allow_request("a") for _ in range(6)] == [True] * 5 + [False]
    wait = limit.wait()
    assert 0 < wait <= 30
    clock.now += wait
    assert limit.allow_request("a")


def test_refused_requests_are_not_counted():
    clock = Clock(6000.0)
    limit = Limit("2/m", clock)
    assert [limit.allow_request("a") for _ in range(2)] == [True, True]
    assert not any(limit.allow_request("a") for _ in range(50))
    clock.now = 6060.0 + 59.9  # two requests, nearly slid out: one more fits at once
    assert limit.allow_request("a")


def test_concurrent_requests_are_all_counted(shared):
    """Every thread's increment is counted: exactly the rate passes, however they interleave
    (a read-modify-write of one shared entry loses the increments of the threads that race)."""
    clock = Clock(6000.0)
    limit = Limit("150/m", clock)
    limit.cache = shared
    start = threading.Barrier(20)

    def caller(_):
        start.wait()
        return sum(limit.allow_request("a") for _ in range(15))

    with ThreadPoolExecutor(20) as pool:
        assert sum(pool.map(caller, range(20))) == 150


def test_its_cost_does_not_grow_with_the_rate(shared):
    """A request reads and writes small counters, never a list of every request's time."""
    clock = Clock(6000.0)
    limit = Limit("1000000/m", clock)
    limit.cache = shared
    for _ in range(500):
        assert limit.allow_request("a")
    assert shared.get("rate:a:60:100") == 500
    clock.now += 60
    assert limit.allow_request("a") and shared.get("rate:a:60:101") == 1
