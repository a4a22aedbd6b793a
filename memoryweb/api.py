"""API v1 (django-ninja) at /api/v1/: the apps' routers mounted once, authentication, the rate
limit, and one JSON error shape for every failure.

Errors read `{"status": 404, "code": "not_found", "message": "No scope named 'x'."}`; invalid
input (422) adds `"errors": [{"field": "text", "message": "…"}]` naming each field.
"""

import functools
import logging
import math
import time

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError
from ninja.security import APIKeyCookie, HttpBearer

from accounts.calllog import call_record
from accounts.lockout import Locked, request_address, token_guard
from accounts.models import CallDoor
from accounts.permissions import Principal
from memoryweb.errors import MemorywebError
from memoryweb.throttle import SlidingWindowThrottle
from memories.scopes import token_and_scope_read

logger = logging.getLogger(__name__)
_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 409: "conflict",
          413: "too_large", 422: "invalid_input", 429: "too_many_requests", 500: "server_error"}


class BearerToken(HttpBearer):
    """`Authorization: Bearer mw_…`: an API token, acting as its user within its limits."""

    def authenticate(self, request: HttpRequest, token: str) -> Principal | None:
        # The scope the path names is read with the token, in one statement (scope_get takes it).
        # Bad tokens are limited per client address (accounts/lockout.py): Locked is a 429.
        match = request.resolver_match
        slug = match.kwargs.get("slug") if match is not None else None
        return token_guard(request_address(request), lambda: token_and_scope_read(token, slug))


class BrowserSession(APIKeyCookie):
    """The browser's session cookie (the pages), with Django's CSRF check on unsafe methods."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        # CSRF protects a session that signs someone in. Without one this scheme cannot
        # authenticate, so the caller gets the 401 for a missing token, not a 403 from a CSRF check
        # (ninja checks CSRF first, on every unsafe request, even one with no cookie at all).
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        return super()._get_key(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Principal | None:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user.is_active:
            return Principal(user=user)
        return None


class PrincipalRateThrottle(SlidingWindowThrottle):
    """Requests per token (or per user for the browser) in a sliding window (memoryweb/throttle.py),
    counted in Django's cache: Redis when REDIS_URL is set, so every process shares the count."""

    def __init__(self) -> None:
        super().__init__(settings.MEMORYWEB_API_RATE)

    def allow_request(self, request: HttpRequest) -> bool:
        self.rate_set(settings.MEMORYWEB_API_RATE)  # read per request: a changed setting (a test, a reload) applies
        return super().allow_request(request)

    def get_cache_key(self, request: HttpRequest) -> str | None:
        principal = getattr(request, "auth", None)
        if not isinstance(principal, Principal):
            return None  # refused before this by authentication
        return f"t{principal.token.pk}" if principal.token else f"u{principal.user.pk}"


api = NinjaAPI(
    title="memoryweb",
    version="1",
    description="Long-term memory for AI assistants that a team shares. Authenticate with `Authorization: Bearer mw_…`.",
    urls_namespace="api-v1",
    auth=[BearerToken(), BrowserSession()],
    throttle=[PrincipalRateThrottle()],
)


def error_response(request: HttpRequest, status: int, message: str, **extra) -> HttpResponse:
    response = api.create_response(
        request, {"status": status, "code": _CODES.get(status, "error"), "message": message, **extra}, status=status
    )
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="memoryweb"'
    return response


@api.exception_handler(MemorywebError)
def _domain_error(request, exc: MemorywebError):
    return error_response(request, exc.status, exc.message)


@api.exception_handler(Locked)
def _locked(request, exc: Locked):
    response = error_response(request, 429, exc.message)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(Exception)
def _unexpected(request, exc: Exception):
    # Whatever went wrong is logged for the operator, never shown (no SQL, path or stack), DEBUG or not.
    logger.exception("API %s %s failed", request.method, request.path)
    return error_response(request, 500, "Something went wrong on our side; it has been logged.")


@api.exception_handler(ValidationError)
def _invalid(request, exc: ValidationError):
    errors = [{"field": _field(error.get("loc", ())), "message": error.get("msg", "is invalid")} for error in exc.errors]
    if any(error.get("type") == "json_invalid" for error in exc.errors) or _is_malformed_json(exc):
        return error_response(request, 400, "The request body is not valid JSON.")
    names = ", ".join(sorted({e["field"] for e in errors if e["field"]})) or "the request"
    return error_response(request, 422, f"Invalid input: {names}.", errors=errors)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    return error_response(request, 401, "A valid API token is required: send `Authorization: Bearer mw_…`.")


@api.exception_handler(Throttled)
def _throttled(request, exc: Throttled):
    wait = max(1, math.ceil(exc.wait or 1))
    response = error_response(request, 429, f"Too many requests; try again in {wait} s.")
    response["Retry-After"] = str(wait)
    return response


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    return error_response(request, exc.status_code, str(exc))


@api.exception_handler(Http404)
def _not_found(request, exc):
    return error_response(request, 404, "Not found.")


@api.exception_handler(RequestDataTooBig)
def _too_big(request, exc):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error_response(request, 413, f"The request body is larger than {limit} bytes.")


def _field(loc) -> str:
    # ("body", "payload", "messages", 0, "text") → "messages.0.text"; ("path", "slug") → "slug"
    parts = [str(p) for p in loc if p not in ("body", "payload", "query", "path", "header")]
    return ".".join(parts)


def _is_malformed_json(exc: ValidationError) -> bool:
    return any("json" in str(error.get("msg", "")).lower() and "decode" in str(error.get("msg", "")).lower() for error in exc.errors)


def _log_calls(run):
    """Wraps every operation's whole run (authentication and throttling included, so refusals
    are logged too): one caller-log row (accounts/calllog.py), written once the response is sent."""
    operation = run.__self__
    name = f"{'/'.join(operation.methods)} {operation.path}"

    @functools.wraps(run)
    def logged(request: HttpRequest, *args, **kwargs):
        started = time.perf_counter()
        status, response = 500, None  # unless a response comes back
        try:
            response = run(request, *args, **kwargs)
            status = response.status_code
            return response
        finally:
            principal = getattr(request, "auth", None)
            record = functools.partial(
                call_record, principal=principal if isinstance(principal, Principal) else None, door=CallDoor.API,
                operation=name, scope_slug=kwargs.get("slug"), status=status, latency_ms=(time.perf_counter() - started) * 1000,
            )
            if isinstance(response, HttpResponseBase):
                # Written when the server closes the response, once its bytes are handed over
                # (Django's `close()` runs it before the request's connection goes back): the
                # caller does not wait for its own log row.
                response._resource_closers.append(record)
            else:
                record()

    return logged


api.add_decorator(_log_calls, mode="view")


def _mount() -> None:
    from memories.api import router as memories_router
    from retrieval.api import router as retrieval_router

    api.add_router("/", memories_router)
    api.add_router("/", retrieval_router)


_mount()
