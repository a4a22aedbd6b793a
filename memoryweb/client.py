"""A Python client for memoryweb's API v1 (`/api/v1`), on httpx.

    from memoryweb.client import MemoryWebClient

    with MemoryWebClient("http://127.0.0.1:8000", "mw_…") as mw:
        stored = mw.remember("notes", "I moved to Berlin", speaker="ada")
        print(mw.answer("notes", "Where does ada live?", speaker="ada").text)
        mw.forget("notes", stored.episodes[0].episode_id)

Results are frozen dataclasses built from the API's JSON; `as_dict()` gives that JSON back in one
canonical form (times as the API writes them: UTC with a `Z`, to the millisecond), which the CLI
prints whether it ran locally or through a server. A refused call raises a `MemoryWebError`
subclass named for its status, carrying the server's message.

Infrastructure only: nothing here imports Django or the apps, so a remote CLI starts in a blink.
"""

import dataclasses
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import httpx

API_PREFIX = "/api/v1"
# Backoff between attempts: 0.5 s, 1 s, 2 s … and never longer than this, whatever Retry-After says.
BACKOFF_SECONDS = 0.5
MAX_WAIT_SECONDS = 30.0
PAGE_SIZE = 100
SOURCE = "sdk"  # the episodes' source when a program writes through this client (the remote CLI says "cli-remote")


# Errors ---------------------------------------------------------------------------------------


class MemoryWebError(Exception):
    """A call the server refused (or could not be reached for). `message` is the server's own."""

    status: int | None = None

    def __init__(self, message: str, *, status: int | None = None, code: str = "", errors: list | None = None,
                 retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.status = status if status is not None else type(self).status
        self.code = code
        self.errors = errors or []
        self.retry_after = retry_after


class BadRequest(MemoryWebError):
    status = 400


class Unauthorized(MemoryWebError):
    status = 401


class Forbidden(MemoryWebError):
    status = 403


class NotFound(MemoryWebError):
    status = 404


class Conflict(MemoryWebError):
    status = 409


class TooLarge(MemoryWebError):
    status = 413


class InvalidInput(MemoryWebError):
    status = 422


class RateLimited(MemoryWebError):
    status = 429


class ServerError(MemoryWebError):
    """A 5xx answer."""

    status = 500


class Unreachable(MemoryWebError):
    """No answer. `sent` is False when the connection could not even be made (nothing reached the
    server), True when the request went out and its reply was lost (the server may have acted)."""

    def __init__(self, message: str, *, sent: bool):
        super().__init__(message)
        self.sent = sent


_ERRORS = {cls.status: cls for cls in (BadRequest, Unauthorized, Forbidden, NotFound, Conflict, TooLarge, InvalidInput, RateLimited)}


# Results --------------------------------------------------------------------------------------


def parse_time(value) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def format_time(moment: datetime | None) -> str | None:
    """As the API's JSON encoder writes a time: milliseconds, UTC as `Z` (ECMA-262's format)."""
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    text = moment.isoformat()
    if moment.microsecond:
        text = text[:23] + text[26:]
    return text.removesuffix("+00:00") + ("Z" if moment.tzinfo is not None else "")


class _Result:
    """Built from the API's JSON by field name; times parsed, nested results built by `_nested`."""

    _times: tuple[str, ...] = ()
    _nested: dict[str, type] = {}
    _renamed: dict[str, str] = {}  # attribute → JSON key, where they differ

    @classmethod
    def from_dict(cls, data: dict):
        values = {}
        for f in dataclasses.fields(cls):
            key = cls._renamed.get(f.name, f.name)
            if key not in data:
                continue
            value = data[key]
            if f.name in cls._times:
                value = parse_time(value)
            elif f.name in cls._nested and value is not None:
                kind = cls._nested[f.name]
                value = tuple(kind.from_dict(v) for v in value) if isinstance(value, list) else kind.from_dict(value)
            elif isinstance(value, list):
                value = tuple(value)
            values[f.name] = value
        return cls(**values)

    def as_dict(self) -> dict:
        return {self._renamed.get(f.name, f.name): _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _plain(value):
    if isinstance(value, _Result):
        return value.as_dict()
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Scope(_Result):
    slug: str
    name: str = ""
    description: str = ""
    team: str = ""
    can_write: bool = False


@dataclass(frozen=True)
class Fact(_Result):
    """A state: `value` of `attribute` for `subject`, true from `valid_from` until `valid_to` (None: still)."""

    id: str
    subject: str
    subject_id: str = ""
    attribute: str = ""
    value: str = ""
    object_entity: str | None = None
    sentence: str = ""
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    status: str = "active"
    supersedes: str | None = None
    source_episode: str | None = None
    confidence: float = 1.0
    importance: float = 0.0
    provenance: str = ""
    author: str | None = None
    _times = ("valid_from", "valid_to")


@dataclass(frozen=True)
class FactChain(_Result):
    fact: Fact
    chain: tuple[Fact, ...] = ()
    _nested = {"fact": Fact, "chain": Fact}


@dataclass(frozen=True)
class Episode(_Result):
    """One thing said or stored, and how far its extraction got (pending → processing → done | failed)."""

    id: str
    status: str
    error: str = ""
    attempts: int = 0
    text: str = ""
    speaker: str = ""
    occurred_at: datetime | None = None
    ingested_at: datetime | None = None
    importance: float | None = None
    source: str = ""
    session_id: str | None = None
    turn_id: str | None = None
    searchable: bool = False  # in the search index yet (a server indexes a write within seconds)
    facts: tuple[Fact, ...] = ()
    _times = ("occurred_at", "ingested_at")
    _nested = {"facts": Fact}


@dataclass(frozen=True)
class IngestedEpisode(_Result):
    episode_id: str
    turn_id: str | None = None
    status: str = "pending"
    created: bool = True
    searchable: bool = False


@dataclass(frozen=True)
class Ingested(_Result):
    """What remember / ingest_session stored: one episode per new turn (skipped: sent before)."""

    session_id: str | None = None
    created: int = 0
    skipped: int = 0
    episodes: tuple[IngestedEpisode, ...] = ()
    _nested = {"episodes": IngestedEpisode}


@dataclass(frozen=True)
class TimeWindow(_Result):
    phrase: str
    start: datetime | None = None
    end: datetime | None = None
    _times = ("start", "end")

    def as_dict(self) -> dict:
        return {"start": format_time(self.start), "end": format_time(self.end), "phrase": self.phrase}


@dataclass(frozen=True)
class RecallItem(_Result):
    """A fact, episode or turn that matched, with its lane scores (why it ranked) and its source."""

    kind: str
    id: str
    text: str
    score: float
    lanes: dict[str, float] = field(default_factory=dict)
    status: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    occurred_at: datetime | None = None
    speaker: str = ""
    source: dict[str, str | None] = field(default_factory=dict)
    why: tuple[str, ...] = ()
    subject: str | None = None
    attribute: str | None = None
    value: str | None = None
    _times = ("valid_from", "valid_to", "occurred_at")

    def as_dict(self) -> dict:
        data = super().as_dict()
        data["source"] = {key: self.source.get(key) for key in ("episode", "session", "turn")}
        if self.kind != "fact":  # only facts have a subject, an attribute and a value
            for key in ("subject", "attribute", "value"):
                data.pop(key)
        return data


@dataclass(frozen=True)
class RecallResult(_Result):
    query: str
    items: tuple[RecallItem, ...] = ()
    window: TimeWindow | None = None
    as_of: datetime | None = None
    include_history: bool = False
    entities: tuple[str, ...] = ()
    lexemes: tuple[str, ...] = ()
    _times = ("as_of",)
    _nested = {"items": RecallItem, "window": TimeWindow}
    _renamed = {"items": "results"}


@dataclass(frozen=True)
class Answer(_Result):
    """An answer from the evidence only, citing the ids it rests on."""

    question: str
    text: str
    citations: tuple[str, ...] = ()
    facts_used: tuple[str, ...] = ()
    provider: str = ""
    window: TimeWindow | None = None
    evidence: tuple[RecallItem, ...] = ()
    _nested = {"window": TimeWindow, "evidence": RecallItem}
    _renamed = {"text": "answer"}


@dataclass(frozen=True)
class ForgetReceipt(_Result):
    """What forgetting an episode erased and changed, counted by kind."""

    episode_id: str
    scope: str
    forgotten_at: datetime | None = None
    forgotten_by: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    _times = ("forgotten_at",)


# The client -----------------------------------------------------------------------------------


class MemoryWebClient:
    """memoryweb's API v1 for one token.

    Every call waits at most `timeout` seconds for the server. Calls are retried up to `retries`
    times, with backoff (0.5 s, 1 s, 2 s …, at most 30 s):
    - on 429 Too Many Requests, waiting as long as Retry-After says (capped), for every call: the
      server refused it before doing anything;
    - when the connection could not be made, for every call: nothing reached the server;
    - on 503 and on a connection lost or timed out after the request was sent, only for calls
      that are safe to repeat: the reads (`scopes`, `episode`, `recall`, `recall_evidence`,
      `answer`, `history`, `facts`, `fact`) and `ingest_session` (idempotent on session and turn
      ids). `remember` (a repeat would store the text twice) and `forget` (a repeat after a lost
      reply answers 404) are not repeated then.
    """

    def __init__(self, url: str, token: str, *, timeout: float | httpx.Timeout = 10.0, retries: int = 3,
                 transport: httpx.BaseTransport | None = None):
        self.url = url.rstrip("/")
        self.retries = max(0, retries)
        self._http = httpx.Client(
            base_url=self.url + API_PREFIX, timeout=timeout, transport=transport,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": "memoryweb-client"},
        )

    def __enter__(self) -> "MemoryWebClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # Writes

    def remember(self, scope: str, text: str, *, speaker: str = "", occurred_at: str | None = None,
                 session_id: str | None = None, source: str = SOURCE) -> Ingested:
        """Remember a text ('I' means `speaker`, by default the token's user). Not repeated on 503.
        `source` is kept with the episode: what sent it."""
        body = {"text": text, "speaker": speaker, "occurred_at": occurred_at, "session_id": session_id, "source": source}
        return Ingested.from_dict(self._call("POST", f"/scopes/{scope}/remember", json=body, repeatable=False))

    def ingest_session(self, scope: str, session_id: str, messages: list[dict], *, source: str = SOURCE) -> Ingested:
        """Store a conversation: messages are `{"id", "speaker", "text", "occurred_at"?}`; turns sent before are skipped."""
        body = {"session_id": session_id, "messages": messages, "source": source}
        return Ingested.from_dict(self._call("POST", f"/scopes/{scope}/sessions", json=body, repeatable=True))

    def forget(self, scope: str, episode_id: str) -> ForgetReceipt:
        """Erase an episode and all that only it put into the memory. Not repeated on 503."""
        return ForgetReceipt.from_dict(self._call("DELETE", f"/scopes/{scope}/episodes/{episode_id}", repeatable=False))

    # Reads

    def scopes(self) -> list[Scope]:
        return [Scope.from_dict(s) for s in self._pages("/scopes")]

    def episode(self, scope: str, episode_id: str) -> Episode:
        """An episode's processing status and the facts extracted from it."""
        return Episode.from_dict(self._call("GET", f"/scopes/{scope}/episodes/{episode_id}"))

    def recall(self, scope: str, query: str, *, k: int = 10, speaker: str = "", as_of: str | None = None,
               include_history: bool = False, filters: dict | None = None) -> RecallResult:
        return self._recall(f"/scopes/{scope}/recall", query, k, speaker, as_of, include_history, filters)

    def recall_evidence(self, scope: str, query: str, *, k: int = 10, speaker: str = "", as_of: str | None = None,
                        include_history: bool = False, filters: dict | None = None) -> RecallResult:
        """Like `recall`, with the raw turns of conversations as evidence."""
        return self._recall(f"/scopes/{scope}/recall/evidence", query, k, speaker, as_of, include_history, filters)

    def answer(self, scope: str, question: str, *, k: int = 10, speaker: str = "") -> Answer:
        body = {"question": question, "k": k, "speaker": speaker}
        return Answer.from_dict(self._call("POST", f"/scopes/{scope}/answer", json=body))

    def history(self, scope: str, entity: str, attribute: str | None = None) -> list[Fact]:
        """What was true when about `entity` (name or id): every fact, in validity order."""
        params = {"entity": entity, **({"attribute": attribute} if attribute else {})}
        return [Fact.from_dict(f) for f in self._call("GET", f"/scopes/{scope}/history", params=params)]

    def facts(self, scope: str, *, entity: str | None = None, attribute: str | None = None, history: bool = False) -> list[Fact]:
        """What the scope believes now (active facts), or with `history` every fact with its interval."""
        params = {"history": "true" if history else "false"}
        params.update({k: v for k, v in (("entity", entity), ("attribute", attribute)) if v})
        return [Fact.from_dict(f) for f in self._pages(f"/scopes/{scope}/facts", params)]

    def fact(self, scope: str, fact_id: str) -> FactChain:
        """A fact with its whole supersession chain, oldest first."""
        return FactChain.from_dict(self._call("GET", f"/scopes/{scope}/facts/{fact_id}"))

    # Transport

    def _recall(self, path, query, k, speaker, as_of, include_history, filters) -> RecallResult:
        body = {"query": query, "k": k, "speaker": speaker, "as_of": as_of, "include_history": include_history, "filters": filters}
        return RecallResult.from_dict(self._call("POST", path, json=body))

    def _pages(self, path: str, params: dict | None = None) -> list[dict]:
        items, offset = [], 0
        while True:
            page = self._call("GET", path, params={**(params or {}), "limit": PAGE_SIZE, "offset": offset})
            items += page["items"]
            offset += len(page["items"])
            if not page["items"] or offset >= page["count"]:
                return items

    def _call(self, method: str, path: str, *, json: dict | None = None, params: dict | None = None,
              repeatable: bool = True) -> Any:
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self._http.request(method, path, json=json, params=params)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # nothing was sent: safe to try again whatever the call
                if last:
                    raise Unreachable(f"memoryweb at {self.url} does not answer ({exc}).", sent=False) from None
                self._wait(attempt)
                continue
            except httpx.TransportError as exc:  # sent, but the reply was lost: the server may have acted
                if last or not repeatable:
                    raise Unreachable(f"memoryweb at {self.url} did not reply ({exc.__class__.__name__}: {exc}).", sent=True) from None
                self._wait(attempt)
                continue
            if response.status_code < 400:
                return response.json()
            error = _error(response)
            if last or not (response.status_code == 429 or (response.status_code == 503 and repeatable)):
                raise error
            self._wait(attempt, error.retry_after)
        raise AssertionError("unreachable")  # the loop returns or raises

    @staticmethod
    def _wait(attempt: int, retry_after: float | None = None) -> None:
        time.sleep(min(MAX_WAIT_SECONDS, retry_after if retry_after is not None else BACKOFF_SECONDS * 2**attempt))


def _error(response: httpx.Response) -> MemoryWebError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    status = response.status_code
    message = body.get("message") or body.get("detail") or f"HTTP {status} {response.reason_phrase}".strip()
    try:
        retry_after = float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        retry_after = None
    cls = _ERRORS.get(status, ServerError if status >= 500 else MemoryWebError)
    return cls(str(message), status=status, code=body.get("code", ""), errors=body.get("errors"), retry_after=retry_after)
