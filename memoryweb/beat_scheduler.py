"""One scheduler for the fleet: `memoryweb beat` runs Celery beat with `LeaderScheduler`, which
sends periodic tasks only while it holds a lock in Redis.

The lock is one key (`memoryweb:beat:leader`) set with NX and an expiry of
MEMORYWEB_BEAT_LOCK_SECONDS, holding this process's name; the leader renews it (a compare-and-
expire script, so it never extends another's) at least every third of the expiry, and deletes it
on a clean stop. Any other beat finds the key taken, says once that it is standing by and who
leads, and tries again every third of the expiry: when the leader dies its key expires and the
first standby to try takes over, within the expiry plus a third of it.

A new leader must not run again what the old one ran just before dying (a nightly backup): every
time a task is sent, its run time is written to `memoryweb:beat:last-run` (a Redis hash by entry
name), and a beat that becomes the leader takes those times for its entries before its first
tick. Each beat keeps its own schedule file, so two on one host need different `--schedule`s.

What it does not prevent: a leader that stalls longer than the expiry between renewing and sending
(a frozen VM) may send once more after a standby took over. The expiry bounds that window.
"""

import logging
import os
import socket
import uuid
from datetime import datetime

import redis
from celery.beat import PersistentScheduler
from django.conf import settings

logger = logging.getLogger("memoryweb.beat")

LOCK_KEY = "memoryweb:beat:leader"
LAST_RUN_KEY = "memoryweb:beat:last-run"
# Only the holder may extend or delete the key: a leader that lost it (expired while it stalled)
# must not take it back from the standby that took over.
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


class LeaderLock:
    """The fleet's beat lock in Redis: `hold()` takes or renews it, True while this process leads."""

    def __init__(self, client: redis.Redis, *, seconds: float, holder: str):
        self.client, self.seconds, self.holder = client, seconds, holder
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    def hold(self) -> bool:
        ms = max(1, int(self.seconds * 1000))
        if self.client.set(LOCK_KEY, self.holder, nx=True, px=ms):
            return True
        return bool(self._renew(keys=[LOCK_KEY], args=[self.holder, ms]))

    def holder_now(self) -> str | None:
        value = self.client.get(LOCK_KEY)
        return value.decode() if value is not None else None

    def release(self) -> None:
        self._release(keys=[LOCK_KEY], args=[self.holder])


class LeaderScheduler(PersistentScheduler):
    """Celery's persistent scheduler, ticking only while it holds the fleet's beat lock."""

    def __init__(self, *args, **kwargs):
        holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.lock = LeaderLock(redis.Redis.from_url(settings.REDIS_URL), seconds=settings.MEMORYWEB_BEAT_LOCK_SECONDS, holder=holder)
        self.leading: bool | None = None
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs) -> float:
        try:
            leading = self.lock.hold()
        except redis.RedisError as exc:
            # Without Redis nothing can be sent anyway; whoever holds the lock when it is back leads.
            logger.warning("beat: Redis does not answer (%s); not scheduling until it does", exc)
            leading = False
        if leading != self.leading:
            self._announce(leading)
        renew_every = self.lock.seconds / 3
        if not leading:
            return renew_every
        return min(super().tick(*args, **kwargs), renew_every)

    def _announce(self, leading: bool) -> None:
        if leading:
            self._take_last_runs()
            logger.warning("beat %s leads: it schedules the periodic tasks for the fleet", self.lock.holder)
        else:
            try:
                holder = self.lock.holder_now() or "another beat"
            except redis.RedisError:
                holder = "another beat"
            logger.warning(
                "beat %s standing by: %s schedules the periodic tasks; this one takes over within %s s if it stops",
                self.lock.holder, holder, round(self.lock.seconds * 4 / 3, 1),
            )
        self.leading = leading

    def _take_last_runs(self) -> None:
        """The run times the previous leader recorded, so a task it ran is not run again at once."""
        try:
            recorded = self.lock.client.hgetall(LAST_RUN_KEY)
        except redis.RedisError:
            return
        for name, entry in self.schedule.items():
            value = recorded.get(name.encode())
            if value is None:
                continue
            ran = datetime.fromisoformat(value.decode())
            try:
                later = entry.last_run_at is None or ran > entry.last_run_at
            except TypeError:  # one naive, one aware: the recorded time is the fleet's
                later = True
            if later:
                entry.last_run_at = ran
        self._heap = None  # rebuilt from the entries on the next tick

    def reserve(self, entry):
        next_entry = super().reserve(entry)
        try:
            self.lock.client.hset(LAST_RUN_KEY, entry.name, next_entry.last_run_at.isoformat())
        except redis.RedisError:
            logger.warning("beat: the run of %s could not be recorded in Redis", entry.name)
        return next_entry

    def close(self) -> None:
        super().close()
        try:
            self.lock.release()  # a clean stop hands over at once, not after the expiry
        except redis.RedisError:
            pass
