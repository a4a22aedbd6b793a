"""Idempotent writes: a write sent again with the same idempotency key gets the first answer.

A client that timed out does not know whether its write happened; it sends it again with the
same key. `idempotent(...)` claims the key in a transaction of its own (a unique constraint
decides between two claims at once), runs the write, and stores its status and JSON body on
the claim. Then:

- the same key, the same request, the first one finished: its status and body, nothing written;
- the same key, another request (another operation, path or body): `Conflict` (409);
- the same key while the first is still running: `Conflict` (409) "in progress", at once. We
  answer rather than wait, as the IETF Idempotency-Key draft does: a waiting request would hold
  a server worker for as long as the first one runs, and the client retries anyway;
- the write fails (a refusal, invalid input, an error): the claim is released, so nothing is
  remembered about it and a corrected retry may use the key again.

Keys belong to a principal (a token; a user acting without one), so two callers' keys never
meet. They are honoured MEMORYWEB_IDEMPOTENCY_KEY_HOURS and pruned with the caller log.

It lives in accounts, the lowest domain layer, so that every door can use it.
"""

import hashlib
import json
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import IdempotencyState, IdempotentRequest
from accounts.permissions import Principal
from memoryweb.errors import Conflict, InvalidInput

logger = logging.getLogger(__name__)

KEY_MAX_LENGTH = 255
# An in-progress claim older than this was left by a process that died mid-request (no request
# runs this long: the server's workers time out first), so a retry may take it over.
CLAIM_STALE_AFTER = timedelta(minutes=10)

Response = tuple[int, Any]  # (HTTP status, JSON-serialisable body)


def principal_key(principal: Principal) -> str:
    """Whose keys these are: the token's (each token its own key space), else the user's."""
    return f"t{principal.token.pk}" if principal.token is not None else f"u{principal.user.pk}"


def request_hash(*, operation: str, body: Any) -> str:
    """SHA-256 of the operation and its canonical JSON body (keys sorted), so the same request
    sent with its fields in another order is still the same request."""
    canonical = json.dumps({"operation": operation, "body": body}, sort_keys=True, separators=(",", ":"), cls=DjangoJSONEncoder)
    return hashlib.sha256(canonical.encode()).hexdigest()


def idempotent(*, principal: Principal, key: str | None, operation: str, body: Any, run: Callable[[], Response]) -> Response:
    """Run the write `run()` at most once per (principal, key) and return its (status, body); a
    retry gets the stored (status, body) back. Without a key, just `run()`.

    `operation` names the write and `body` holds everything that makes it this request (path
    parameters included): a key sent again with another operation or body is a `Conflict`."""
    if key is None:
        return run()
    key = key_validate(key)
    owner = principal_key(principal)
    digest = request_hash(operation=operation, body=body)
    claim = _claim(owner=owner, key=key, operation=operation, digest=digest)
    if claim.state == IdempotencyState.DONE:
        return claim.response_status, claim.response_body
    try:
        status, response = run()
    except BaseException:
        _release(claim)
        raise
    if status >= 300:  # an answer that is not a success is not remembered, as for an exception
        _release(claim)
        return status, response
    stored = json.loads(json.dumps(response, cls=DjangoJSONEncoder))
    updated = IdempotentRequest.objects.filter(pk=claim.pk, state=IdempotencyState.IN_PROGRESS).update(
        state=IdempotencyState.DONE, response_status=status, response_body=stored,
    )
    if updated != 1:  # pruned or taken over meanwhile (only after CLAIM_STALE_AFTER): the write stands
        logger.warning("Idempotency key %r of %s was taken over before its answer was stored.", key, owner)
    return status, response


def key_validate(key: str) -> str:
    """A key is 1 to 255 visible ASCII characters (a UUID is the usual choice)."""
    if not key or len(key) > KEY_MAX_LENGTH or not all("!" <= ch <= "~" for ch in key):
        raise InvalidInput(f"An idempotency key must be 1 to {KEY_MAX_LENGTH} visible ASCII characters (a UUID, say).")
    return key


def _claim(*, owner: str, key: str, operation: str, digest: str) -> IdempotentRequest:
    """The claim on (owner, key): a new one (in progress, ours), or a finished one for the same
    request. Raises Conflict for another request under the key, or one still in progress."""
    expired = timezone.now() - timedelta(hours=settings.MEMORYWEB_IDEMPOTENCY_KEY_HOURS)
    for _attempt in range(3):  # an expired or stale row is removed, then the INSERT tried again
        try:
            # Its own transaction (a savepoint inside an outer one): a second INSERT of the same
            # key waits on the unique index until this commits, then fails.
            with transaction.atomic():
                return IdempotentRequest.objects.create(principal_key=owner, key=key, operation=operation, body_hash=digest)
        except IntegrityError:
            existing = IdempotentRequest.objects.filter(principal_key=owner, key=key).first()
        if existing is None:
            continue  # released or pruned in between
        if existing.created_at < expired or (
            existing.state == IdempotencyState.IN_PROGRESS and existing.created_at < timezone.now() - CLAIM_STALE_AFTER
        ):
            IdempotentRequest.objects.filter(pk=existing.pk, created_at=existing.created_at).delete()
            continue
        if existing.body_hash != digest:
            raise Conflict(
                f"The idempotency key {key!r} was used for another request ({existing.operation}); "
                "send a new key for a new request."
            )
        if existing.state == IdempotencyState.IN_PROGRESS:
            raise Conflict(f"A request with the idempotency key {key!r} is still in progress; retry it in a moment.")
        return existing
    raise Conflict(f"The idempotency key {key!r} is being claimed by another request; retry it in a moment.")


def _release(claim: IdempotentRequest) -> None:
    try:
        IdempotentRequest.objects.filter(pk=claim.pk, state=IdempotencyState.IN_PROGRESS).delete()
    except Exception:  # the write's own error matters more; the claim expires anyway
        logger.exception("Could not release idempotency claim %s.", claim.pk)


def idempotency_prune(*, now=None) -> int:
    """Delete the keys older than MEMORYWEB_IDEMPOTENCY_KEY_HOURS; returns how many."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.MEMORYWEB_IDEMPOTENCY_KEY_HOURS)
    deleted, _ = IdempotentRequest.objects.filter(created_at__lt=cutoff).delete()
    return deleted
