"""Failed sign-ins and bad API tokens, limited (settings.MEMORYWEB_LOGIN_FAILURES within
MEMORYWEB_LOGIN_WINDOW_MINUTES).

A sign-in is refused while its account or its client address has that many failures in the
window; a bad API token (the API, MCP over HTTP) while its address has. The lock lasts until the
oldest of those failures leaves the window. A successful sign-in clears its account's and its
address's failures; a valid token clears nothing (else one token of one's own would reset the
count of guesses at others'). The count lives in the database, so every server process shares
it; each lock that starts is audited (`signin.locked`, `token.locked`).
"""

import math
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone

from accounts.audit import audit_record
from accounts.models import SignInFailure, SignInFailureKind
from memoryweb.errors import MemorywebError

# A client address found without failures is not read again by this process for this long, so a
# valid token costs no statement on most requests; a lock reaches another process this much later.
_CLEAR_SECONDS = 1.0


class Locked(MemorywebError):
    """Too many failures: refused until `until`."""

    status = 429

    def __init__(self, message: str, until: datetime):
        super().__init__(message)
        self.until = until

    @property
    def retry_after(self) -> int:
        """Whole seconds until the lock ends (at least 1), for a Retry-After header."""
        return max(1, math.ceil((self.until - timezone.now()).total_seconds()))

    @property
    def minutes(self) -> int:
        return max(1, math.ceil(self.retry_after / 60))


@dataclass(frozen=True)
class _Limit:
    failures: int
    window: timedelta


def _limit() -> _Limit:
    return _Limit(settings.MEMORYWEB_LOGIN_FAILURES, timedelta(minutes=settings.MEMORYWEB_LOGIN_WINDOW_MINUTES))


def client_address(remote_addr: str | None, forwarded_for: str | None = None) -> str:
    """The client's address: the connection's peer, or behind a proxy (MEMORYWEB_BEHIND_PROXY)
    the last address of X-Forwarded-For, the one our proxy added (earlier ones are the client's
    own say and can be forged)."""
    if settings.MEMORYWEB_BEHIND_PROXY and forwarded_for:
        last = forwarded_for.split(",")[-1].strip()
        if last:
            return last[:200]
    return (remote_addr or "unknown")[:200]


def request_address(request: HttpRequest) -> str:
    return client_address(request.META.get("REMOTE_ADDR"), request.META.get("HTTP_X_FORWARDED_FOR"))


def _account_key(username: str) -> str:
    return (username or "").strip().lower()[:200]


def _until(kind: str, key: str, now: datetime) -> datetime | None:
    """When the lock on (kind, key) ends, or None when it has fewer failures than the limit."""
    limit = _limit()
    times = list(
        SignInFailure.objects.filter(kind=kind, key=key, at__gt=now - limit.window)
        .order_by("-at").values_list("at", flat=True)[: limit.failures]
    )
    return times[-1] + limit.window if len(times) >= limit.failures else None


def _record(rows: list[tuple[str, str]], now: datetime) -> None:
    SignInFailure.objects.filter(at__lte=now - _limit().window).delete()
    SignInFailure.objects.bulk_create([SignInFailure(kind=kind, key=key, at=now) for kind, key in rows])


def _audit(action: str, kind: str, key: str, until: datetime) -> None:
    audit_record(
        principal=None, action=action, target_type=kind, target_id=key[:64],
        after={"failures": settings.MEMORYWEB_LOGIN_FAILURES, "window_minutes": settings.MEMORYWEB_LOGIN_WINDOW_MINUTES,
               "until": until.isoformat()},
    )


def _signin_locked(username: str, address: str, now: datetime) -> Locked | None:
    ends = [
        until for kind, key in ((SignInFailureKind.ACCOUNT, _account_key(username)), (SignInFailureKind.ADDRESS, address))
        if key and (until := _until(kind, key, now)) is not None
    ]
    if not ends:
        return None
    locked = Locked("", max(ends))
    locked.message = f"Too many failed sign-ins: try again in {locked.minutes} minute{'s' if locked.minutes != 1 else ''}."
    return locked


def signin_check(*, username: str, address: str) -> None:
    """Raise Locked when this account or this address may not try to sign in now."""
    locked = _signin_locked(username, address, timezone.now())
    if locked is not None:
        raise locked


def signin_failed(*, username: str, address: str) -> Locked | None:
    """Count a failed sign-in against the account and the address; the Locked it starts, audited,
    or None."""
    now = timezone.now()
    account = _account_key(username)
    _record([(SignInFailureKind.ADDRESS, address)] + ([(SignInFailureKind.ACCOUNT, account)] if account else []), now)
    locked = _signin_locked(username, address, now)
    if locked is not None:
        for kind, key in ((SignInFailureKind.ACCOUNT, account), (SignInFailureKind.ADDRESS, address)):
            if key and _until(kind, key, now) is not None:
                _audit("signin.locked", kind, key, locked.until)
    return locked


def signin_succeeded(*, username: str, address: str) -> None:
    """A success clears the account's and the address's failed sign-ins."""
    SignInFailure.objects.filter(kind=SignInFailureKind.ACCOUNT, key=_account_key(username)).delete()
    SignInFailure.objects.filter(kind=SignInFailureKind.ADDRESS, key=address).delete()
    _clear.forget(address)


class _ClearAddresses:
    """Addresses this process found without a token lock, and when (see _CLEAR_SECONDS)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seen: dict[str, float] = {}

    def fresh(self, address: str) -> bool:
        with self.lock:
            seen = self.seen.get(address)
        return seen is not None and time.monotonic() - seen < _CLEAR_SECONDS

    def remember(self, address: str) -> None:
        with self.lock:
            if len(self.seen) > 10_000:
                self.seen = {}
            self.seen[address] = time.monotonic()

    def forget(self, address: str | None = None) -> None:
        with self.lock:
            if address is None:
                self.seen = {}
            else:
                self.seen.pop(address, None)


_clear = _ClearAddresses()


def token_lock_memo_clear() -> None:
    """Forget which addresses were found clear (tests start each from none)."""
    _clear.forget()


def _token_locked(address: str, now: datetime) -> Locked | None:
    until = _until(SignInFailureKind.TOKEN, address, now)
    if until is None:
        return None
    locked = Locked("", until)
    locked.message = f"Too many bad API tokens from this address: try again in {locked.retry_after} s."
    return locked


def token_guard(address: str, authenticate):
    """`authenticate()` (a bearer string's check: its token or principal, None when bad) for a
    caller at `address`, limited: Locked while the address has too many bad tokens in the window,
    and a bad one counted (the lock it starts audited)."""
    now = timezone.now()
    if not _clear.fresh(address):
        locked = _token_locked(address, now)
        if locked is not None:
            raise locked
        _clear.remember(address)
    found = authenticate()
    if found is None:
        _clear.forget(address)
        _record([(SignInFailureKind.TOKEN, address)], now)
        locked = _token_locked(address, now)
        if locked is not None:
            _audit("token.locked", SignInFailureKind.TOKEN, address, locked.until)
            raise locked
    return found
