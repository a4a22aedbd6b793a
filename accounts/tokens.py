"""API tokens: issuing, authenticating, revoking."""

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from accounts.models import ApiToken, User

TOKEN_PREFIX = "mw_"
_PREFIX_BYTES = 6  # 12 hex chars: public, finds the row
_SECRET_BYTES = 32


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str  # the full bearer string; shown once, never stored


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def token_issue(
    *, user: User, name: str, scopes, can_write: bool = False, expires_at: datetime | None = None, actor=None
) -> IssuedToken:
    """Create a token limited to `scopes` (which the caller has checked the user may see).
    Audited as `actor` (a Principal; None for system use such as tests and fixtures)."""
    prefix = secrets.token_hex(_PREFIX_BYTES)
    raw = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(_SECRET_BYTES)}"
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=name, prefix=prefix, secret_hash=_hash(raw), can_write=can_write, expires_at=expires_at
        )
        token.scopes.set(scopes)
        _audit(actor, "token.create", token, after={
            "name": name, "prefix": prefix, "scopes": [s.slug for s in scopes], "can_write": can_write,
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


def token_authenticate(raw: str) -> ApiToken | None:
    """The one place a bearer string becomes a token. Wrong, revoked and expired tokens give None."""
    raw = (raw or "").strip()
    prefix = _split(raw)
    if prefix is None:
        return None
    token = ApiToken.objects.select_related("user").filter(prefix=prefix).first()
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
    return token


def token_revoke(*, token: ApiToken, actor=None) -> ApiToken:
    """Revoke at once (idempotent); audited as `actor` when it changes anything."""
    if token.revoked_at is None:
        with transaction.atomic():
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
            _audit(actor, "token.revoke", token, after={"revoked_at": token.revoked_at.isoformat()})
    return token


def _audit(actor, action: str, token: ApiToken, *, after: dict) -> None:
    if actor is None:
        return
    from memories.services.audit import audit_record  # memories depends on accounts, not the reverse

    audit_record(principal=actor, action=action, target_type="token", target_id=token.public_id, after=after)
