"""The MCP door: memoryweb's tools for language-model clients, served over streamable HTTP at
`/mcp` (`http_app`, mounted beside Django in `memoryweb/asgi.py`) and over stdio (`memoryweb mcp`).

Each tool is a door like an API handler: it takes the caller's `Principal` (set per HTTP request
by `McpAuth` from the bearer token, or once for a stdio process from `--as`/`--token`), resolves
the scope with `scope_get`, calls one service and returns its result as JSON text. A domain
error becomes a tool error (`isError`) carrying its message, never an empty success.
"""

import inspect
import json
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import asdict
from typing import Annotated
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http.request import split_domain_port, validate_host
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent
from pydantic import Field
from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from accounts.calllog import call_record
from accounts.idempotency import KEY_MAX_LENGTH, idempotent
from accounts.models import CallDoor
from accounts.permissions import Access, Principal, can
from accounts.lockout import Locked, client_address, token_guard
from accounts.tokens import token_authenticate
from memoryweb.errors import MemorywebError
from memories.scopes import scope_get, scope_list
from memories.services.extract import episode_get
from memories.services.facts import fact_as_dict, fact_list_for_episode
from retrieval.indexing import with_searchable
from memories.services.ingest import remember as remember_service
from retrieval import services as retrieval

# Who is calling. HTTP: set by McpAuth for the request (the SDK hands each message's context to
# its handler). stdio: set once for the process by the `mcp` command.
current_principal: ContextVar[Principal | None] = ContextVar("memoryweb_mcp_principal", default=None)

server = MCPServer(
    "memoryweb",
    instructions=(
        "memoryweb is long-term memory shared by a team. Memories live in scopes (shared memory spaces named by "
        "a slug); call list_scopes first to learn which ones you may read or write. Use remember to store what "
        "the user tells you, recall or answer to look things up before saying you do not know, and history to "
        "see how a fact changed over time. Every result carries ids you can cite."
    ),
)

ScopeSlug = Annotated[str, Field(
    description="The slug of the scope (shared memory space) to use, as listed by list_scopes, e.g. 'team-notes'.",
)]
Speaker = Annotated[str, Field(
    description="Who is speaking or asking, so that 'I', 'me' and 'my' mean this person, e.g. 'ankesh'. Empty: unknown.",
)]
HowMany = Annotated[int, Field(ge=1, le=50, description="How many results to return (1-50).")]


IdempotencyKey = Annotated[str | None, Field(
    max_length=KEY_MAX_LENGTH,
    description=(
        "Optional: any unique string (a UUID) for this write. If you are not sure a call went through (a timeout), "
        "call again with the same key and arguments: you get the first result and nothing is written twice."
    ),
)]


def _tool(fn: Callable[..., dict] | None = None, *, idempotent_write: bool = False):
    """Register `fn(principal, **arguments) -> dict` as an MCP tool; its docstring is the tool's
    description and its other parameters the tool's arguments. A write (`idempotent_write=True`)
    also takes an `idempotency_key` argument (accounts/idempotency.py).

    The registered handler is async: it takes the principal from `current_principal` and runs
    `fn` on Django's thread for synchronous code (`thread_sensitive=True`, as Django runs sync
    views under ASGI), where the ORM may be used; the SDK would otherwise run a sync tool on a
    pool thread of its own whose database connections nobody closes. Every call is logged
    (accounts/calllog.py), refusals too."""
    if fn is None:
        return lambda f: _tool(f, idempotent_write=idempotent_write)
    signature = inspect.signature(fn)

    async def handler(**arguments) -> CallToolResult:
        principal = current_principal.get()
        try:
            text = await sync_to_async(_in_thread, thread_sensitive=True)(fn, principal, arguments)
        except MemorywebError as exc:
            return _error(exc.message)
        return CallToolResult(content=[TextContent(type="text", text=text)])

    parameters = [p for name, p in signature.parameters.items() if name != "principal"]
    if idempotent_write:
        parameters.append(inspect.Parameter("idempotency_key", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=IdempotencyKey))
    handler.__signature__ = signature.replace(parameters=parameters, return_annotation=CallToolResult)
    handler.__name__ = handler.__qualname__ = fn.__name__
    server.add_tool(handler, name=fn.__name__, description=inspect.cleandoc(fn.__doc__), structured_output=False)
    return fn


def _in_thread(fn: Callable[..., dict], principal: Principal | None, arguments: dict) -> str:
    """Run the tool as `principal` and return its JSON text (the text a keyed retry gets again)."""
    # As Django does around each request: drop connections that broke or outlived CONN_MAX_AGE.
    close_old_connections()
    started, status = time.perf_counter(), 500
    try:
        if principal is None:  # McpAuth and the stdio command always set one
            status = 401
            raise MemorywebError("Not authenticated.")
        key = arguments.pop("idempotency_key", None)
        try:
            status, text = idempotent(
                principal=principal, key=key, operation=f"mcp.{fn.__name__}", body=arguments,
                run=lambda: (200, json.dumps(fn(principal, **arguments), default=str)),
            )
        except MemorywebError as exc:
            status = exc.status
            raise
        return text
    finally:
        call_record(
            principal=principal, door=CallDoor.MCP, operation=fn.__name__, scope_slug=arguments.get("scope"),
            status=status, latency_ms=(time.perf_counter() - started) * 1000,
        )
        close_old_connections()


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


@_tool(idempotent_write=True)
def remember(
    principal: Principal,
    scope: ScopeSlug,
    text: Annotated[str, Field(description="What was said or should be remembered, in the speaker's words.")],
    speaker: Speaker = "",
    occurred_at: Annotated[str | None, Field(
        description="When it happened or was said, ISO 8601 (e.g. '2025-02-10' or '2025-02-10T09:30:00Z'); default now.",
    )] = None,
    session_id: Annotated[str | None, Field(
        description="The id of the conversation this belongs to, to keep its notes together; optional.",
    )] = None,
) -> dict:
    """Store one thing the user said or asked you to remember in a scope's long-term memory.

    Call it when the user states a fact about themselves, other people, places or plans that
    should be remembered later ("I moved from San Francisco to New York", "Priya leads the
    search team"). The raw text is kept; facts are extracted from it (a new value for something
    like where someone lives supersedes the old one, which stays in the history). `scope` is the
    slug of the shared memory space to write to (see list_scopes); you need write access.

    Example: {"scope": "team-notes", "text": "I moved from San Francisco to New York", "speaker": "ankesh"}

    Returns the stored episode's id, status and `searchable` (whether recall's index has it yet;
    a server indexes it within seconds) and the facts extracted so far, each with its id,
    validity interval and provenance."""
    target = scope_get(principal, scope, Access.WRITE)
    result = remember_service(
        scope=target, text=text, speaker=speaker, occurred_at=occurred_at, actor=principal, source="mcp", session_id=session_id,
    )
    episode = episode_get(scope=target, episode_public_id=result.episodes[0].episode_id)
    facts = fact_list_for_episode(scope=target, episode=episode)
    data = asdict(result)
    with_searchable(scope=target, rows=data["episodes"], key="episode_id")
    return {"scope": target.slug, **data, "facts": [fact_as_dict(fact) for fact in facts]}


Query = Annotated[str, Field(description="What to look for, in plain words or as a question.")]
AsOf = Annotated[str | None, Field(description="Search the memory as it stood on this date (YYYY-MM-DD); default: now.")]
IncludeHistory = Annotated[bool, Field(
    description="Also return facts that are no longer true (superseded), with their validity intervals.",
)]


def _search_tool(search: Callable[..., retrieval.RecallResult], name: str, description: str) -> Callable[..., dict]:
    """recall and recall_evidence take the same arguments; only the service (and what it keeps) differs."""

    def tool(
        principal: Principal, scope: ScopeSlug, query: Query, k: HowMany = 10, as_of: AsOf = None,
        include_history: IncludeHistory = False, speaker: Speaker = "",
    ) -> dict:
        target = scope_get(principal, scope, Access.READ)
        return search(
            scope=target, query=query, k=k, as_of=as_of, include_history=include_history, speaker=speaker,
        ).as_dict()

    tool.__name__, tool.__doc__ = name, description
    return _tool(tool)


recall = _search_tool(retrieval.recall, "recall", """
    Search a scope's long-term memory for the facts and remembered episodes that best match a query.

    Call it before answering anything that depends on what the user or the team told you
    earlier, or to check what is already known before remembering something. Results are ranked;
    each has an id (cite it), a kind (fact or episode), lane scores (similarity, importance,
    recency), the validity interval of a fact (valid_from, valid_to; valid_to null means still
    true) and where it came from. Time phrases in the query ("last March", "in 2024") filter by
    time. `scope` is the slug of the shared memory space to search (see list_scopes).

    Example: {"scope": "team-notes", "query": "where does ankesh live?", "speaker": "ankesh"}""")

recall_evidence = _search_tool(retrieval.recall_evidence, "recall_evidence", """
    Search a scope's memory like recall, but return the raw conversation turns as evidence too.

    Call it when you need the exact words that were said (to quote them, or to judge an answer
    yourself), for example about a past conversation. Turns come with their session and turn ids;
    facts with their validity intervals; every item with its lane scores. `scope` is the slug of
    the shared memory space to search (see list_scopes).

    Example: {"scope": "team-notes", "query": "what did Caroline say about the adoption agency?"}""")


@_tool
def answer(
    principal: Principal,
    scope: ScopeSlug,
    question: Annotated[str, Field(description="The question to answer from memory.")],
    speaker: Speaker = "",
    k: Annotated[int, Field(ge=1, le=50, description="How much evidence to gather (1-50).")] = 10,
) -> dict:
    """Answer a question from a scope's long-term memory, citing the evidence used.

    Call it for direct questions about what the memory holds ("where do I live?", "did I ever
    live in SF?", "what does Priya work on?"). The answer is built only from stored memories;
    `citations` lists the ids of the evidence it relies on, and `evidence` holds those items with
    their scores, validity intervals and provenance. If nothing matches it says it does not know.
    `scope` is the slug of the shared memory space to ask (see list_scopes).

    Example: {"scope": "team-notes", "question": "Where do I live?", "speaker": "ankesh"}"""
    target = scope_get(principal, scope, Access.READ)
    return retrieval.answer(scope=target, question=question, speaker=speaker, k=k).as_dict()


@_tool
def history(
    principal: Principal,
    scope: ScopeSlug,
    entity: Annotated[str, Field(description="The person, place or thing, by name, alias or id, e.g. 'ankesh'.")],
    attribute: Annotated[str | None, Field(
        description="Only this attribute, e.g. 'lives_in', 'works_at', 'role'; default: all of them.",
    )] = None,
) -> dict:
    """List every fact ever recorded about an entity, oldest first, including ones no longer true.

    Call it for questions about change over time ("where did I live before New York?", "when did
    Priya change teams?"). Each fact has its status (active, superseded or retracted), validity
    interval (valid_from, valid_to), the fact it superseded, its source episode and provenance.
    `scope` is the slug of the shared memory space (see list_scopes).

    Example: {"scope": "team-notes", "entity": "ankesh", "attribute": "lives_in"}"""
    target = scope_get(principal, scope, Access.READ)
    facts = retrieval.history(scope=target, entity=entity, attribute=attribute)
    return {"scope": target.slug, "entity": entity, "facts": [fact_as_dict(fact) for fact in facts]}


@_tool
def list_scopes(principal: Principal) -> dict:
    """List the scopes (shared memory spaces) you may use, with whether you may write to them.

    Call it first, to learn which `scope` slugs the other tools accept. Takes no arguments.

    Example: {}"""
    return {"scopes": [
        {
            "slug": scope.slug, "name": scope.name, "description": scope.description, "team": scope.team.slug,
            "id": str(scope.public_id), "access": "write" if can(principal, scope, Access.WRITE) else "read",
        }
        for scope in scope_list(principal=principal)
    ]}


def forget(
    principal: Principal,
    scope: ScopeSlug,
    episode_id: Annotated[str, Field(description="The id of the episode to erase, as returned by remember or recall.")],
) -> dict:
    """Erase one remembered episode for good: its text, the conversation turn it came from, and
    the facts that rest only on it (facts also supported by other episodes stay).

    Call it only when the user asks you to forget something specific; it cannot be undone.
    Returns a receipt with what was erased, counted by kind. `scope` is the slug of the shared
    memory space (see list_scopes); you need write access.

    Example: {"scope": "team-notes", "episode_id": "5b1f2c9e-8d4a-4f7e-9a51-2f0c3e6d7a10"}"""
    target = scope_get(principal, scope, Access.WRITE)
    return retrieval.episode_forget(principal=principal, scope=target, episode_public_id=episode_id).as_dict()


# The forget service is built on another branch; the tool appears once it is merged.
if hasattr(retrieval, "episode_forget"):
    _tool(forget, idempotent_write=True)


# --- streamable HTTP ---------------------------------------------------------------------------

# Stateless: every request carries (and is checked for) its token, nothing is kept between
# requests, so any `serve --workers` process can answer any request. JSON replies: the tools
# do not stream. Host and Origin are checked by McpAuth against ALLOWED_HOSTS instead of the
# SDK's own list, which cannot express Django's patterns.
http_app = server.streamable_http_app(
    streamable_http_path="/mcp", stateless_http=True, json_response=True,
    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
)


class McpAuth:
    """ASGI wrapper in front of the SDK's app at /mcp: the Host and Origin must be allowed
    (DNS rebinding), and the bearer token valid, before a request reaches MCP; the token's
    principal is then set for the tools."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        started = time.perf_counter()
        headers = Headers(scope=scope)
        if not _host_allowed(headers.get("host", "")):
            return await _refuse(scope, receive, send, 400, "The Host header is not allowed (ALLOWED_HOSTS).", started)
        origin = headers.get("origin")
        if origin and not _origin_allowed(origin):
            return await _refuse(
                scope, receive, send, 403, "The Origin header is not allowed (ALLOWED_HOSTS, CSRF_TRUSTED_ORIGINS).", started,
            )
        scheme, _, raw = headers.get("authorization", "").partition(" ")
        try:
            token = await sync_to_async(_fresh_connections, thread_sensitive=True)(
                _token_limited, raw=raw, scope=scope, headers=headers,
            ) if scheme.lower() == "bearer" else None
        except Locked as locked:
            return await _refuse(scope, receive, send, 429, locked.message, started, retry_after=locked.retry_after)
        if token is None:
            return await _refuse(scope, receive, send, 401, "A valid API token is required: send `Authorization: Bearer mw_…`.", started)
        reset = current_principal.set(Principal.for_token(token))
        try:
            await self.app(scope, receive, send)
        finally:
            current_principal.reset(reset)


def _token_limited(*, raw: str, scope, headers: Headers):
    """The bearer string's token, None for a bad or missing one, Locked while the caller's address
    has sent too many bad ones (accounts/lockout.py: counted as the API counts them)."""
    client = scope.get("client") or (None, None)
    address = client_address(client[0], headers.get("x-forwarded-for"))
    return token_guard(address, lambda: token_authenticate(raw))


def _fresh_connections(fn: Callable, /, **kwargs):
    # On Django's sync thread outside a request, as Django does around one.
    close_old_connections()
    try:
        return fn(**kwargs)
    finally:
        close_old_connections()


def _host_allowed(host: str) -> bool:
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


def _origin_allowed(origin: str) -> bool:
    return origin in settings.CSRF_TRUSTED_ORIGINS or _host_allowed(urlsplit(origin).netloc)


_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 429: "too_many_requests"}


async def _refuse(scope, receive, send, status: int, message: str, started: float, *, retry_after: int | None = None) -> None:
    # The API's error shape: {"status", "code", "message"}.
    headers = {"WWW-Authenticate": 'Bearer realm="memoryweb"'} if status == 401 else {}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    response = JSONResponse({"status": status, "code": _CODES[status], "message": message}, status_code=status, headers=headers)
    await response(scope, receive, send)
    # Logged after the answer went out; which tool was asked for is unknown (MCP never read the body).
    await sync_to_async(_fresh_connections, thread_sensitive=True)(
        call_record, principal=None, door=CallDoor.MCP, operation="(refused at /mcp)", scope_slug=None, status=status,
        latency_ms=(time.perf_counter() - started) * 1000,
    )
