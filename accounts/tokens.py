"""API tokens: issuing, authenticating, revoking."""

import functools
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from accounts.audit import audit_record
from accounts.models import ApiToken, User
from accounts.permissions import TOKEN_RECHECK_SECONDS, Access, Principal, can, is_team_admin
from memoryweb.errors import Forbidden, InvalidInput, NotFound
from memoryweb.rows import columns, instance

TOKEN_PREFIX = "mw_"
_PREFIX_BYTES = 6  # 12 hex chars: public, finds the row
_SECRET_BYTES = 32
# How long a process reuses a row a door read with a token (`token_row_recent`): what a token's
# principal already allows (accounts.permissions: a token is live "as of at most a second ago").
RECENT_ROW_SECONDS = TOKEN_RECHECK_SECONDS
RECENT_ROWS_MAX = 4096  # entries kept before the stale ones are dropped


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str  # the full bearer string; shown once, never stored


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def token_issue(
    *, actor: Principal, user: User, name: str, scopes, can_write: bool = False, expires_at: datetime | None = None
) -> IssuedToken:
    """Issue a token for `user` limited to `scopes`, read-only unless `can_write`. Audited as `actor`.

    Refused unless the actor is a user (not a token), is `user` or administers the team of every
    scope named, may itself read (or, for a read+write token, write) every scope, and `user`
    may too (a token is a limit, never a grant); the expiry must lie in the future."""
    if actor.token is not None:
        raise Forbidden("API tokens cannot issue tokens.")
    if not actor.is_live:
        raise Forbidden("Inactive users cannot issue tokens.")
    name = (name or "").strip()
    if not name or len(name) > ApiToken._meta.get_field("name").max_length:
        raise InvalidInput("A token needs a name of 1 to 100 characters.")
    scopes = list(dict.fromkeys(scopes))
    if not scopes:
        raise InvalidInput("A token needs at least one scope.")
    if expires_at is not None and expires_at <= timezone.now():
        raise InvalidInput("A token's expiry must lie in the future.")
    access = Access.WRITE if can_write else Access.READ
    owner = Principal(user=user)
    for scope in scopes:
        if not can(actor, scope, Access.READ):
            raise NotFound(f"No scope named {scope.slug!r}.")
        if not can(actor, scope, access):
            raise Forbidden(f"You may not {access.value} scope {scope.slug!r}, so you cannot issue a token that does.")
        if user.pk != actor.user.pk and not is_team_admin(actor.user, scope.team):
            raise Forbidden(f"Only admins of team {scope.team.slug!r} can issue tokens for other users.")
        if not can(owner, scope, access):
            raise Forbidden(f"{user.username} may not {access.value} scope {scope.slug!r}.")
    prefix = secrets.token_hex(_PREFIX_BYTES)
    raw = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(_SECRET_BYTES)}"
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=name, prefix=prefix, secret_hash=_hash(raw), can_write=can_write, expires_at=expires_at
        )
        token.scopes.set(scopes)
        audit_record(principal=actor, action="token.create", target_type="token", target_id=token.public_id, after={
            "name": name, "user": user.username, "prefix": prefix, "scopes": [s.slug for s in scopes], "can_write": can_write,
            "expires_at": expires_at.isoformat() if expires_at else None,
        })
    return IssuedToken(token=token, secret=raw)


def _split(raw: str) -> str | None:
    if not raw.startswith(TOKEN_PREFIX):
        return None
    prefix, sep, secret = raw[len(TOKEN_PREFIX):].partition("_")
    if not sep or not prefix or not secret:
        return None
    return prefix


class _RecentRows:
    """Rows read with a token, by key (the token's prefix first), each with when it was read."""

    def __init__(self):
        self.rows: dict[tuple, tuple[float, tuple]] = {}
        self.lock = threading.Lock()

    def get(self, key: tuple, read: Callable[[], tuple | None]) -> tuple | None:
        now = time.monotonic()
        hit = self.rows.get(key)
        if hit is not None and now - hit[0] < RECENT_ROW_SECONDS:
            return hit[1]
        row = read()
        with self.lock:
            if len(self.rows) >= RECENT_ROWS_MAX:
                self.rows = {k: v for k, v in self.rows.items() if now - v[0] < RECENT_ROW_SECONDS}
            if row is None:
                self.rows.pop(key, None)
            else:
                self.rows[key] = (now, row)
        return row

    def forget(self, prefix: str) -> None:
        with self.lock:
            self.rows = {k: v for k, v in self.rows.items() if k[0] != prefix}


_recent = _RecentRows()


def token_row_recent(key: tuple, read: Callable[[], tuple | None]) -> tuple | None:
    """`read()`'s row for `key` (the token's prefix, then what else the row holds, e.g. a scope's
    slug), or the one this process read for that key less than RECENT_ROW_SECONDS ago: an agent
    calling many times a second has its token read once a second, not once a call (the round trip
    and the Python around it cost a request about 1 ms). The secret is still checked against the
    row's hash on every call, and expiry against the clock; a revocation, a deactivated user or a
    changed role reaches a process within that second, a revocation through `token_revoke` in
    this process at once. A missing row (an unknown prefix) is never kept."""
    return _recent.get(key, read)


def token_rows_recent_clear() -> None:
    """Forget every row `token_row_recent` keeps (tests start each from none)."""
    with _recent.lock:
        _recent.rows = {}


def token_authenticate(raw: str, *, lookup: Callable[[str], ApiToken | None] | None = None) -> ApiToken | None:
    """The one place a bearer string becomes a token. Wrong, revoked and expired tokens give None.

    `lookup(prefix)` reads the token with its user (`_token_with_user`'s statement unless a door
    reads more in the same one: memories.scopes.token_and_scope_read)."""
    raw = (raw or "").strip()
    prefix = _split(raw)
    if prefix is None:
        return None
    token = (lookup or _token_with_user)(prefix)
    # Compare even when no row matched, so timing does not tell a valid prefix from an invalid one.
    expected = token.secret_hash if token is not None else _hash("")
    if not hmac.compare_digest(expected, _hash(raw)) or token is None:
        return None
    if not token.is_usable or not token.user.is_active:
        return None
    now = timezone.now()
    # A cheap conditional update: at most one write a minute per token.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
        _recent.forget(token.prefix)  # a kept row holds the old time: the next call reads the new one
    return token


@functools.cache
def token_sql(*, also: str = "", joined: str = "") -> str:
    """The token by its prefix (the statement's last parameter) with its user, as `t` and `u`;
    `also` adds columns after theirs and `joined` tables (a door reading more in one statement)."""
    quote = connection.ops.quote_name
    user_id, pk = quote(ApiToken._meta.get_field("user").column), quote(User._meta.pk.column)
    return (
        f"SELECT {columns(ApiToken, 't')}, {columns(User, 'u')}{also} FROM {quote(ApiToken._meta.db_table)} t "
        f"JOIN {quote(User._meta.db_table)} u ON u.{pk} = t.{user_id}{joined} WHERE t.{quote('prefix')} = %s"
    )


def token_from_row(row) -> ApiToken:
    """The token and its user from a row of `token_sql`."""
    token = instance(ApiToken, row)
    token.user = instance(User, row, len(ApiToken._meta.concrete_fields))
    return token


def _token_with_user(prefix: str) -> ApiToken | None:
    """The token with this prefix (unique) and its user, in one statement written once
    (memoryweb/rows.py: on every request the ORM would spend ~0.6 ms of CPU building it)."""
    with connection.cursor() as cursor:
        cursor.execute(token_sql(), [prefix])
        row = cursor.fetchone()
    return token_from_row(row) if row is not None else None


def token_revoke(*, token: ApiToken, actor: Principal) -> ApiToken:
    """Revoke at once (idempotent), audited when it changes anything. The token's own user, an
    admin of a team whose scopes it names, or a superuser (the operators' admin) may revoke it."""
    if actor.token is not None and actor.token.pk != token.pk:
        raise Forbidden("An API token can revoke only itself.")
    allowed = (
        actor.user.pk == token.user_id
        or actor.user.is_superuser
        or any(is_team_admin(actor.user, scope.team) for scope in token.scopes.select_related("team"))
    )
    if not allowed or not actor.is_live:
        raise NotFound(f"No token with prefix {token.prefix!r}.")
    with transaction.atomic():
        # Lock the row: two revocations at once write one audit event.
        locked = ApiToken.objects.select_for_update().get(pk=token.pk)
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.save(update_fields=["revoked_at"])
            audit_record(principal=actor, action="token.revoke", target_type="token", target_id=token.public_id,
                         after={"revoked_at": locked.revoked_at.isoformat()})
    token.revoked_at = locked.revoked_at
    _recent.forget(token.prefix)
    return token
