"""API v1 for retrieval: recall, recall evidence, answers, history, export and import. Doors only (see memories/api.py)."""

import io
import tempfile
from datetime import datetime
from typing import Literal

from django.http import FileResponse, HttpRequest
from django.http.multipartparser import MultiPartParserError
from ninja import Field, Router, Schema
from ninja.errors import HttpError
from ninja.responses import Status
from pydantic import BaseModel

from accounts.permissions import Access
from memoryweb.errors import InvalidInput
from memories.api import ERRORS, FactOut
from memories.scopes import scope_get
from memories.services.facts import fact_as_dict
from retrieval.backup import scope_backup, scope_restore
from retrieval.services import answer, history, recall, recall_evidence

router = Router(tags=["retrieval"])

# The answers of recall and answer are plain pydantic models, not ninja Schemas: they are built
# from dicts, and a Schema validates every nested item through ninja's DjangoGetter (made for
# model instances), 0.5 ms of CPU for ten results against 0.15 (docs/ARCHITECTURE.md, "Measuring
# the doors"). Same OpenAPI schema, same JSON.


class SourceOut(BaseModel):
    episode: str | None
    session: str | None
    turn: str | None


class ItemOut(BaseModel):
    kind: Literal["fact", "episode", "turn"]
    id: str
    text: str
    score: float
    lanes: dict[str, float] = Field(description="similarity, importance and recency, each 0..1: why it ranked")
    status: str | None
    valid_from: datetime | None
    valid_to: datetime | None
    occurred_at: datetime | None
    speaker: str
    source: SourceOut = Field(description="where it came from")
    why: list[str]
    subject: str | None = None
    attribute: str | None = None
    value: str | None = None


class WindowOut(BaseModel):
    start: datetime | None
    end: datetime | None
    phrase: str


class RecallOut(BaseModel):
    query: str
    results: list[ItemOut]
    window: WindowOut | None = Field(description="the time window read from the query, if any")
    as_of: datetime | None
    include_history: bool
    entities: list[str]
    lexemes: list[str]


class AnswerOut(BaseModel):
    question: str
    answer: str
    citations: list[str] = Field(description="ids of the evidence the answer rests on")
    facts_used: list[str]
    provider: str
    window: WindowOut | None
    evidence: list[ItemOut]


class Filters(Schema):
    kinds: list[Literal["fact", "episode", "turn"]] | None = None
    speaker: str | None = None
    since: str | None = Field(None, description="ISO 8601 date")
    until: str | None = Field(None, description="ISO 8601 date")


class RecallIn(Schema):
    query: str = Field(examples=["where do I live?"])
    k: int = Field(10, ge=1, le=200)
    speaker: str = Field("", description="who asks: 'I' and 'my' mean this person")
    as_of: str | None = Field(None, description="answer as the memory stood on this date (ISO 8601)")
    include_history: bool = Field(False, description="include superseded and retracted facts")
    filters: Filters | None = None


class AnswerIn(Schema):
    question: str = Field(examples=["Did I ever live in San Francisco?"])
    k: int = Field(10, ge=1, le=200)
    speaker: str = ""


def _recall(request: HttpRequest, slug: str, payload: RecallIn, search) -> dict:
    scope = scope_get(request.auth, slug, Access.READ)
    filters = payload.filters.dict(exclude_none=True) if payload.filters else None
    result = search(
        scope=scope, query=payload.query, k=payload.k, filters=filters, as_of=payload.as_of,
        include_history=payload.include_history, speaker=payload.speaker,
    )
    return result.as_dict()


@router.post("/scopes/{slug}/recall", response={200: RecallOut, **ERRORS}, summary="Recall facts and episodes")
def recall_view(request: HttpRequest, slug: str, payload: RecallIn):
    return _recall(request, slug, payload, recall)


@router.post("/scopes/{slug}/recall/evidence", response={200: RecallOut, **ERRORS}, summary="Recall with raw turns as evidence")
def recall_evidence_view(request: HttpRequest, slug: str, payload: RecallIn):
    return _recall(request, slug, payload, recall_evidence)


@router.post("/scopes/{slug}/answer", response={200: AnswerOut, **ERRORS}, summary="Answer a question, citing the evidence")
def answer_view(request: HttpRequest, slug: str, payload: AnswerIn):
    scope = scope_get(request.auth, slug, Access.READ)
    return answer(scope=scope, question=payload.question, speaker=payload.speaker, k=payload.k).as_dict()


@router.get("/scopes/{slug}/history", response={200: list[FactOut], **ERRORS}, summary="What was true when, about an entity")
def history_view(request: HttpRequest, slug: str, entity: str, attribute: str | None = None):
    scope = scope_get(request.auth, slug, Access.READ)
    return [fact_as_dict(fact) for fact in history(scope=scope, entity=entity, attribute=attribute)]



class RestoreOut(Schema):
    scope: str
    created: bool
    merge: bool
    written: dict[str, int]
    skipped: dict[str, int] = Field(description="rows a merge found present already")
    renewed_ids: int = Field(description="rows given new public ids, since another scope holds theirs")
    vectors_reused: int
    documents: int | None = Field(description="None: the search index is rebuilt in the background")
    seconds: float
    rows: int
    erased_again: int = Field(description="rows of the file that an erasure since removed, removed again")
    reapplied: list[dict] = Field(description="per erasure applied again: erasure_id, kind, erased_at, erased_by, rows, reason")
    tombstones_unmatched: int = Field(description="erasures hashed with another SECRET_KEY, which could not be checked")


@router.get("/scopes/{slug}/export", response={200: None, **ERRORS}, summary="Download a backup of the scope (team admins)")
def export_view(request: HttpRequest, slug: str, with_vectors: bool = False):
    scope = scope_get(request.auth, slug, Access.READ)  # the service decides who may back it up
    out = tempfile.TemporaryFile()  # on disk, not in memory: a scope may be large
    scope_backup(principal=request.auth, scope=scope, out=out, with_vectors=with_vectors)
    out.seek(0)
    return FileResponse(out, as_attachment=True, filename=f"{scope.slug}.jsonl.gz", content_type="application/gzip")


@router.post("/scopes/{slug}/import", response={201: RestoreOut, **ERRORS},
             summary="Restore a backup into this scope, new or empty (or merge=true) (team admins)")
def import_view(request: HttpRequest, slug: str, merge: bool = False):
    """The file as a multipart upload named `file`, or as the raw body."""
    if request.content_type == "multipart/form-data":
        try:
            upload = request.FILES.get("file")
        except MultiPartParserError as exc:  # e.g. no boundary: the body cannot be read as a form
            raise HttpError(400, f"The multipart body cannot be read ({exc}).") from None
        if upload is None:
            raise InvalidInput("Send the backup as a multipart file field named 'file', or as the raw request body.")
        file = upload
    else:
        # Not a form, so Django has not read the stream: the raw body is the file.
        file = io.BytesIO(request.body)
    receipt = scope_restore(principal=request.auth, file=file, scope=slug, merge=merge, index=False)
    return Status(201, receipt.as_dict())
