"""API v1 for the memory core: scopes, remembering, sessions, episodes, entities and facts.

Doors only: each handler resolves the scope through the caller's principal, calls one service,
and renders what the service returns. Mounted in memoryweb/api.py."""

from datetime import datetime

from django.http import HttpRequest
from ninja import Field, Router, Schema
from ninja.pagination import LimitOffsetPagination, paginate
from ninja.responses import Status

from accounts.calllog import CallOut, call_list
from accounts.permissions import Access, can
from memoryweb.api_idempotency import idempotent_write
from memories.scopes import scope_get, scope_list
from memories.services.extract import episode_get, episode_retry
from memories.services.facts import (
    entity_get, entity_list, episode_as_dict, fact_as_dict, fact_chain, fact_correct, fact_get, fact_history, fact_list,
    fact_list_for_episode, fact_restore, fact_retract,
)
from memories.services.ingest import ingest_session, remember
from retrieval.indexing import with_searchable
from retrieval.services import episode_forget

router = Router(tags=["memory"])


class Error(Schema):
    status: int
    code: str
    message: str
    errors: list[dict] | None = None


ERRORS = {400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 413: Error, 422: Error, 429: Error}


class ScopeOut(Schema):
    slug: str
    name: str
    description: str
    team: str
    can_write: bool


class FactOut(Schema):
    id: str
    subject: str
    subject_id: str
    attribute: str
    value: str
    object_entity: str | None
    sentence: str
    valid_from: datetime | None
    valid_to: datetime | None
    status: str
    supersedes: str | None
    source_episode: str | None
    confidence: float
    importance: float
    provenance: str
    author: str | None


SEARCHABLE = ("true once the episode is in the search index (its document is written; recall ranks it). A server "
              "answers a write once the raw text is stored, and indexes it within seconds; until then recall finds "
              "recent rows by their text alone.")


class EpisodeOut(Schema):
    id: str
    status: str = Field(description="pending → processing → done | failed")
    error: str
    attempts: int
    text: str
    speaker: str
    occurred_at: datetime
    ingested_at: datetime
    importance: float | None
    source: str
    session_id: str | None
    turn_id: str | None
    searchable: bool = Field(description=SEARCHABLE)
    facts: list[FactOut] = Field(default_factory=list, description="what extraction produced from it")


class IngestedEpisodeOut(Schema):
    episode_id: str
    turn_id: str | None
    status: str
    searchable: bool = Field(description=SEARCHABLE)
    created: bool = Field(description="false: this turn was sent before and was left as it was")


class IngestOut(Schema):
    session_id: str | None
    created: int
    skipped: int
    episodes: list[IngestedEpisodeOut]


class EntityOut(Schema):
    id: str
    name: str
    kind: str
    aliases: list[str]


class EntityDetailOut(EntityOut):
    facts: list[FactOut] = Field(description="its active facts")


class FactDetailOut(Schema):
    fact: FactOut
    chain: list[FactOut] = Field(description="the whole supersession chain through this fact, oldest first")


class ForgetOut(Schema):
    episode_id: str
    scope: str
    forgotten_at: datetime
    forgotten_by: str
    counts: dict[str, int] = Field(description="what was erased or changed, by kind")


class CallOutSchema(Schema):
    """One row of a scope's caller log (accounts.calllog.CallOut, read from the rows of a page)."""

    when: datetime
    door: str = Field(description="api or mcp")
    operation: str
    user: str | None = Field(description="who called; null when unauthenticated")
    token: str | None = Field(description="the token's public prefix, when one was used")
    scope: str
    status: int
    latency_ms: float

    @staticmethod
    def resolve_when(call) -> datetime:
        return CallOut.of(call).when

    @staticmethod
    def resolve_user(call) -> str | None:
        return CallOut.of(call).user

    @staticmethod
    def resolve_token(call) -> str | None:
        return CallOut.of(call).token

    @staticmethod
    def resolve_scope(call) -> str:
        return CallOut.of(call).scope


class RememberIn(Schema):
    text: str = Field(description="what was said or should be remembered; 'I' means the speaker", examples=["I moved to Berlin"])
    speaker: str = Field("", description="who said it (default: the caller)")
    occurred_at: str | None = Field(None, description="when it happened, ISO 8601 (default: now)", examples=["2025-02-10"])
    session_id: str | None = Field(None, description="append it to this conversation")
    source: str = Field("api", max_length=32, description="what sent it, kept with the episode (e.g. sdk, cli-remote)")


class MessageIn(Schema):
    id: str = Field(description="the caller's turn id; a turn sent again is skipped")
    speaker: str = ""
    text: str
    occurred_at: str | None = Field(None, description="ISO 8601")


class SessionIn(Schema):
    session_id: str
    messages: list[MessageIn]
    source: str = Field("api", max_length=32, description="what sent it, kept with the episodes (e.g. sdk, cli-remote)")


class CorrectIn(Schema):
    value: str | None = Field(None, description="the right value")
    sentence: str | None = Field(None, description="the corrected sentence (default: the old one with the value replaced)")
    attribute: str | None = None


class RetractIn(Schema):
    reason: str = ""


def _principal(request: HttpRequest):
    return request.auth


def _facts_out(facts) -> list[dict]:
    return [fact_as_dict(fact) for fact in facts]


def _entity_out(entity, *, facts=None) -> dict:
    data = {
        "id": str(entity.public_id), "name": entity.name, "kind": entity.kind,
        "aliases": sorted({alias.alias for alias in entity.aliases.all()}),
    }
    if facts is not None:
        data["facts"] = _facts_out(facts)
    return data


@router.get("/scopes", response={200: list[ScopeOut], **ERRORS}, summary="The scopes the caller may see")
@paginate(LimitOffsetPagination)
def scopes(request: HttpRequest):
    principal = _principal(request)
    return [
        {"slug": s.slug, "name": s.name, "description": s.description, "team": s.team.slug, "can_write": can(principal, s, Access.WRITE)}
        for s in scope_list(principal=principal)
    ]


@router.post("/scopes/{slug}/remember", response={202: IngestOut, **ERRORS}, summary="Remember a text")
@idempotent_write
def remember_text(request: HttpRequest, slug: str, payload: RememberIn):
    principal = _principal(request)
    scope = scope_get(principal, slug, Access.WRITE)
    result = remember(
        scope=scope, text=payload.text, speaker=payload.speaker, occurred_at=payload.occurred_at, actor=principal,
        source=payload.source, session_id=payload.session_id,
    )
    return Status(202, _ingested(scope, result.as_dict()))


@router.post("/scopes/{slug}/sessions", response={202: IngestOut, **ERRORS}, summary="Ingest a session of messages (idempotent)")
@idempotent_write
def ingest(request: HttpRequest, slug: str, payload: SessionIn):
    principal = _principal(request)
    scope = scope_get(principal, slug, Access.WRITE)
    result = ingest_session(
        scope=scope, session_id=payload.session_id, messages=[m.dict() for m in payload.messages], actor=principal, source=payload.source,
    )
    return Status(202, _ingested(scope, result.as_dict()))


@router.get("/scopes/{slug}/episodes/{episode_id}", response={200: EpisodeOut, **ERRORS}, summary="An episode's status and its facts")
def episode(request: HttpRequest, slug: str, episode_id: str):
    scope = scope_get(_principal(request), slug, Access.READ)
    found = episode_get(scope=scope, episode_public_id=episode_id)
    return _episode_out(scope, found)


@router.delete("/scopes/{slug}/episodes/{episode_id}", response={200: ForgetOut, **ERRORS},
               summary="Forget an episode: erase it and all that only it put into the memory")
@idempotent_write
def episode_forget_view(request: HttpRequest, slug: str, episode_id: str):
    # The path is the episode's, so the route sits beside its GET; the service is retrieval's
    # (it also erases the search index). It refuses a principal that may not write (403) itself.
    principal = _principal(request)
    scope = scope_get(principal, slug, Access.READ)
    return episode_forget(principal=principal, scope=scope, episode_public_id=episode_id).as_dict()


@router.post("/scopes/{slug}/episodes/{episode_id}/retry", response={202: EpisodeOut, **ERRORS}, summary="Retry a failed episode")
@idempotent_write
def episode_retry_view(request: HttpRequest, slug: str, episode_id: str):
    principal = _principal(request)
    scope = scope_get(principal, slug, Access.WRITE)
    retried = episode_retry(scope=scope, episode_public_id=episode_id, actor=principal)
    return Status(202, _episode_out(scope, retried))


@router.get("/scopes/{slug}/entities", response={200: list[EntityOut], **ERRORS}, summary="Entities, searched by name or alias")
@paginate(LimitOffsetPagination)
def entities(request: HttpRequest, slug: str, q: str = ""):
    scope = scope_get(_principal(request), slug, Access.READ)
    return [_entity_out(e) for e in entity_list(scope=scope, query=q).prefetch_related("aliases")]


@router.get("/scopes/{slug}/entities/{entity_id}", response={200: EntityDetailOut, **ERRORS}, summary="An entity with its active facts")
def entity(request: HttpRequest, slug: str, entity_id: str):
    scope = scope_get(_principal(request), slug, Access.READ)
    found = entity_get(scope=scope, name_or_id=entity_id)
    return _entity_out(found, facts=fact_list(scope=scope, entity=str(found.public_id)))


@router.get("/scopes/{slug}/facts", response={200: list[FactOut], **ERRORS},
            summary="What the scope believes now (active facts), or with history=true every fact with its interval")
@paginate(LimitOffsetPagination)
def facts(request: HttpRequest, slug: str, entity: str | None = None, attribute: str | None = None, history: bool = False):
    scope = scope_get(_principal(request), slug, Access.READ)
    if history:
        return _facts_out(fact_history(scope=scope, entity_name_or_id=entity, attribute=attribute))
    return _facts_out(fact_list(scope=scope, entity=entity, attribute=attribute))


@router.get("/scopes/{slug}/facts/{fact_id}", response={200: FactDetailOut, **ERRORS}, summary="A fact with its supersession chain")
def fact(request: HttpRequest, slug: str, fact_id: str):
    scope = scope_get(_principal(request), slug, Access.READ)
    found = fact_get(scope=scope, fact_public_id=fact_id)
    return {"fact": fact_as_dict(found), "chain": _facts_out(fact_chain(scope=scope, fact=found))}


@router.post("/scopes/{slug}/facts/{fact_id}/correct", response={200: FactOut, **ERRORS}, summary="Correct a fact (a manual fact supersedes it)")
@idempotent_write
def correct(request: HttpRequest, slug: str, fact_id: str, payload: CorrectIn):
    principal = _principal(request)
    scope = scope_get(principal, slug, Access.WRITE)
    corrected = fact_correct(
        scope=scope, fact_public_id=fact_id, value=payload.value, sentence=payload.sentence, attribute=payload.attribute,
        actor=principal,
    )
    return fact_as_dict(corrected)


@router.post("/scopes/{slug}/facts/{fact_id}/retract", response={200: FactOut, **ERRORS}, summary="Retract a fact")
@idempotent_write
def retract(request: HttpRequest, slug: str, fact_id: str, payload: RetractIn):
    principal = _principal(request)
    scope = scope_get(principal, slug, Access.WRITE)
    return fact_as_dict(fact_retract(scope=scope, fact_public_id=fact_id, actor=principal, reason=payload.reason))


@router.post("/scopes/{slug}/facts/{fact_id}/restore", response={200: FactOut, **ERRORS}, summary="Restore a retracted fact")
@idempotent_write
def restore(request: HttpRequest, slug: str, fact_id: str):
    principal = _principal(request)
    scope = scope_get(principal, slug, Access.WRITE)
    return fact_as_dict(fact_restore(scope=scope, fact_public_id=fact_id, actor=principal))


@router.get("/scopes/{slug}/log", response={200: list[CallOutSchema], **ERRORS},
            summary="The scope's caller log, newest first (admins of its team, signed in)")
@paginate(LimitOffsetPagination)
def call_log(request: HttpRequest, slug: str, since: datetime | None = None):
    principal = _principal(request)
    scope = scope_get(principal, slug, Access.READ)
    return call_list(principal=principal, scope=scope, since=since)  # a queryset: the page is sliced in SQL


def _ingested(scope, data: dict) -> dict:
    with_searchable(scope=scope, rows=data["episodes"], key="episode_id")
    return data


def _episode_out(scope, episode) -> dict:
    data = episode_as_dict(episode, facts=list(fact_list_for_episode(scope=scope, episode=episode)))
    return with_searchable(scope=scope, rows=[data], key="id")[0]
