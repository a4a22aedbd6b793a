"""A rate limit that costs the same at any rate and counts every process's requests.

A sliding window estimated from two fixed windows' counters: the current window's count plus
the previous window's, weighted by the share of it the sliding window still covers (the way
large proxies count). Each request is one atomic increment (Redis's INCR; the local-memory
cache increments under its lock) and one read of the previous window's count.

ninja's `SimpleRateThrottle` keeps every request's time in one cache entry and reads and writes
the whole list on every request: up to `N` floats pickled twice a request at `N/m`, thousands
at the rates given to a fleet of agents, and two processes that read the list at once each
write back their own, so the requests of one are lost from the count.

A refused request is not counted (the increment is taken back), so a caller that keeps trying
while refused is let through as soon as the window allows, and `wait()` says when that is.
"""

import math
import threading
import time

from django.core.cache import cache as default_cache
from django.http import HttpRequest
from ninja.throttling import BaseThrottle

from memoryweb.env import RATE

PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


def rate_parse(rate: str) -> tuple[int, int]:
    """'600/m' → (600, 60): requests, and the window in seconds."""
    match = RATE.fullmatch(rate or "")
    if match is None:
        raise ValueError(f"A rate looks like 600/m (per s, m, h or d), not {rate!r}.")
    return int(match[1]), PERIODS[match[2]]


class SlidingWindowThrottle(BaseThrottle):
    """At most N requests per period of the rate ('N/m') by each `get_cache_key(request)` (None:
    not limited), over a window that slides (estimated as the module says)."""

    cache = default_cache
    timer = staticmethod(time.time)
    prefix = "rate"

    def __init__(self, rate: str):
        self.rate, self.limit = rate, rate_parse(rate)  # (requests, seconds), replaced as one
        self._refused = threading.local()  # one instance serves every request thread: `wait` is per thread

    def rate_set(self, rate: str) -> None:
        if rate != self.rate:
            self.rate, self.limit = rate, rate_parse(rate)

    def get_cache_key(self, request: HttpRequest) -> str | None:
        raise NotImplementedError("get_cache_key() names whose requests are counted together")

    def allow_request(self, request: HttpRequest) -> bool:
        ident = self.get_cache_key(request)
        if ident is None:
            return True
        n, d = self.limit
        now = self.timer()
        window = math.floor(now / d)
        elapsed = now - window * d  # seconds into the current window
        current = f"{self.prefix}:{ident}:{d}:{window}"
        count = self._increment(current, d)
        before = self.cache.get(f"{self.prefix}:{ident}:{d}:{window - 1}", 0)
        if before * (1 - elapsed / d) + count <= n:
            self._refused.wait = None
            return True
        self._taken_back(current)
        self._refused.wait = self.wait_for(before=before, count=count - 1, elapsed=elapsed)
        return False

    def wait_for(self, *, before: int, count: int, elapsed: float) -> float:
        """Seconds until one more request fits, with `before` requests in the previous window,
        `count` in this one and `elapsed` seconds of it gone (no other requests meanwhile)."""
        n, d = self.limit
        if count < n:  # room in this window once enough of the previous one has slid out
            return max(0.0, (1 - elapsed / d) * d - (n - count - 1) / before * d) if before else 0.0
        # Only in the next window, once enough of this one has slid out.
        return (d - elapsed) + max(0.0, (1 - (n - 1) / count) * d)

    def wait(self) -> float | None:
        """After a refusal on this thread, the seconds until a request would be let through."""
        return getattr(self._refused, "wait", None)

    def _increment(self, key: str, duration: int) -> int:
        try:
            return self.cache.incr(key)
        except ValueError:  # the window's first request (or its key expired just now)
            # Kept through the next window too, where it is the previous one.
            if self.cache.add(key, 1, timeout=2 * duration + 1):
                return 1
            return self.cache.incr(key)

    def _taken_back(self, key: str) -> None:
        try:
            self.cache.decr(key)
        except ValueError:  # expired meanwhile: nothing to take back
            pass
