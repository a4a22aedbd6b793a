"""Language-model providers: which one is in force, and the clients themselves.

`get_llm()` returns the client for LLM_PROVIDER:

- `offline`: the rule-based English extractor (`memoryweb.providers.offline`); no model, no network.
- `ollama`: the official `ollama` client against OLLAMA_URL, structured output via `format=<JSON schema>`.
- `openai`: the official `openai` client (OPENAI_BASE_URL lets any OpenAI-compatible server serve),
  `response_format={"type": "json_object"}` with the schema in the prompt: JSON mode works on
  every compatible server, which strict `json_schema` mode does not (it also rejects our optional
  fields); the pydantic validation below is what we rely on either way.
- `auto`: `ollama` when it answers at OLLAMA_URL, else `offline`.

Every client has `.name`, `.is_offline`, `.extract(...) -> Extraction` and
`.decide(...) -> ReconcileDecision | None`; the remote ones also have `.complete_json(...)`.
Model output is validated against the pydantic schemas. Invalid JSON, or JSON that does not fit
the schema, is sent back to the model with the validation error, up to LLM_MAX_ATTEMPTS times in
all; then `LLMError`. Timeouts (LLM_TIMEOUT) and unreachable servers raise `LLMError` at once,
marked `retryable` so the extraction task can back off and try again later.
"""

import functools
import json
import re
from datetime import UTC, datetime
from typing import Protocol, TypeVar

import httpx
from django.conf import settings
from pydantic import BaseModel, ValidationError

from memoryweb.providers.schemas import ATTRIBUTES, ExtractedEntity, ExtractedFact, Extraction, ReconcileDecision

T = TypeVar("T", bound=BaseModel)


class LLMError(Exception):
    """The language model could not give a usable answer. The message says why, in one sentence.

    `retryable` is True for timeouts, unreachable servers, rate limits and server errors (worth
    trying again later), False for invalid output after every attempt, refused requests and
    configuration mistakes."""

    def __init__(self, message: str, *, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


class LLM(Protocol):
    name: str
    is_offline: bool

    def extract(self, *, text: str, speaker: str, occurred_at: datetime) -> Extraction: ...

    def decide(self, *, fact: ExtractedFact, candidates: list[dict]) -> ReconcileDecision | None: ...


# --- which provider is in force --------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def ollama_reachable(url: str) -> bool:
    try:
        return httpx.get(f"{url.rstrip('/')}/api/version", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def resolved_provider() -> str:
    """`auto` becomes `ollama` when it answers, else `offline`."""
    if settings.LLM_PROVIDER == "auto":
        return "ollama" if ollama_reachable(settings.OLLAMA_URL) else "offline"
    return settings.LLM_PROVIDER


def describe_llm() -> tuple[bool, str, str]:
    provider = settings.LLM_PROVIDER
    if provider == "offline":
        return True, "offline (rule-based English extractor)", ""
    if provider == "auto":
        if ollama_reachable(settings.OLLAMA_URL):
            return True, f"auto: ollama at {settings.OLLAMA_URL}, model {settings.OLLAMA_MODEL}", ""
        return True, f"auto: offline (no Ollama at {settings.OLLAMA_URL})", ""
    if provider == "ollama":
        if ollama_reachable(settings.OLLAMA_URL):
            return True, f"ollama at {settings.OLLAMA_URL}, model {settings.OLLAMA_MODEL}", ""
        return False, f"ollama at {settings.OLLAMA_URL}", f"Ollama at {settings.OLLAMA_URL} is unreachable."
    base = settings.OPENAI_BASE_URL or "https://api.openai.com/v1"
    if not settings.OPENAI_API_KEY and not settings.OPENAI_BASE_URL:
        return False, f"openai, model {settings.OPENAI_MODEL}", "LLM_PROVIDER=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL)."
    return True, f"openai at {base}, model {settings.OPENAI_MODEL}", ""


def get_llm() -> "LLM":
    """The client in force. Built once per process for a given configuration, rebuilt when the
    settings change (tests flip them). Raises LLMError when the configuration cannot work
    (LLM_PROVIDER=openai without a key or a base URL)."""
    provider = resolved_provider()
    if provider == "ollama":
        key = ("ollama", settings.OLLAMA_URL, settings.OLLAMA_MODEL, settings.LLM_TIMEOUT, settings.LLM_MAX_ATTEMPTS)
    elif provider == "openai":
        key = (
            "openai", settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY, settings.OPENAI_MODEL,
            settings.LLM_TIMEOUT, settings.LLM_MAX_ATTEMPTS,
        )  # fmt: skip
    else:
        key = ("offline",)
    return _build(key)


@functools.lru_cache(maxsize=8)
def _build(key: tuple) -> "LLM":
    kind = key[0]
    if kind == "ollama":
        _, url, model, timeout, attempts = key
        return OllamaLLM(url=url, model=model, timeout=timeout, max_attempts=attempts)
    if kind == "openai":
        _, base_url, api_key, model, timeout, attempts = key
        return OpenAILLM(base_url=base_url, api_key=api_key, model=model, timeout=timeout, max_attempts=attempts)
    return OfflineLLM()


# --- offline ----------------------------------------------------------------------------------


class OfflineLLM:
    """The rule-based extractor behind the same interface. It makes no reconciliation decisions:
    `decide` returns None, meaning "use the attribute rules" (single-valued attributes supersede,
    the rest accumulate; see schemas.is_single_valued)."""

    name = "offline"
    is_offline = True

    def extract(self, *, text: str, speaker: str, occurred_at: datetime) -> Extraction:
        from memoryweb.providers import offline

        return offline.extract(text=text, speaker=speaker, occurred_at=occurred_at)

    def decide(self, *, fact: ExtractedFact, candidates: list[dict]) -> ReconcileDecision | None:
        return None

    def complete_json(self, *, system: str, user: str, schema: type[T]) -> T:
        raise NotImplementedError("The offline provider has no language model; check `is_offline` first.")


# --- prompts ----------------------------------------------------------------------------------

_VOCABULARY = "\n".join(f"  - {name}: {meaning}" for name, meaning in ATTRIBUTES.items())

EXTRACTION_SYSTEM = f"""You turn one message into long-term memories for a memory store that a team shares.
Reply with ONE JSON object and nothing else, matching this JSON schema:
{{schema}}

What to extract
- facts: durable states or events about people that the message states (or plainly implies).
  Nothing from questions, greetings, small talk, plans, wishes or hypotheticals ("I might move",
  "I'd love to live in Paris"). One fact per state: a job statement gives separate facts for the
  organization (works_at), the title (role) and the city (lives_in).
- subject: who the fact is about. For the first person (I, me, my, we) use the speaker's name
  exactly as given; never "I", "me" or "user". For a named third person, their name.
- attribute: snake_case. Use this vocabulary whenever it fits:
{_VOCABULARY}
  For "my X is Y" use X in snake_case ("my favorite color is blue" -> favorite_color = blue).
- value: short and canonical, no article: "New York", "Google", "senior engineer", "football".
  loves / enjoys / is into -> likes; hates / can't stand / doesn't like -> dislikes;
  "playing football" -> football.
- "moved from X to Y": ONE lives_in fact, value Y, previous_value X.
- "got promoted to T (at O)": role T (and works_at O when the organization is named).
- "no longer", "not ... anymore", "left", "quit": the fact that ended, with negated true
  ("I left Google" -> works_at Google, negated).
- object_entity: the named thing the value refers to (Google, New York, a pet's name) with
  object_kind person | organization | place | thing | other; null for plain values (football, blue).
- sentence: one short third-person sentence stating only this fact with the subject's name,
  e.g. "ankesh lives in New York."
- valid_from: the ISO 8601 date the fact became true when the message says ("in March 2024",
  "last week", "since 2019"), resolved against the time the message was said; else null.
- confidence 0..1; importance 0..1 per fact and for the whole message (importance): life events
  (moving, jobs, family, health) 0.75 or more, preferences about 0.5, small talk 0.2 or less.
- entities: every subject and object_entity, with kind and role (actor for a subject, location
  for a place, object otherwise).
- occurred_at: when the described event happened, if the message says so; else null.
- If nothing is worth remembering, reply {{"entities": [], "facts": [], "importance": 0.1}}.

Example. Speaker: ankesh. Said at: 2024-05-10. Message: "I moved from Paris to Berlin last month."
{{"entities": [{{"name": "ankesh", "kind": "person", "role": "actor"}},
              {{"name": "Berlin", "kind": "place", "role": "location"}},
              {{"name": "Paris", "kind": "place", "role": "location"}}],
 "facts": [{{"subject": "ankesh", "attribute": "lives_in", "value": "Berlin", "object_entity": "Berlin",
            "object_kind": "place", "sentence": "ankesh lives in Berlin.", "valid_from": "2024-04-10",
            "previous_value": "Paris", "negated": false, "confidence": 0.95, "importance": 0.85}}],
 "importance": 0.85, "occurred_at": "2024-04-10"}}"""

DECIDE_SYSTEM = """You keep a memory of facts consistent. You get one NEW fact and the ACTIVE facts already
stored about the same subject that look related. Decide what to do with the new fact:
- ADD: it is new information and the existing facts stay true (another hobby, another pet, a
  second language).
- UPDATE: it replaces one existing fact, which stops being true (a new city for lives_in, a new
  employer for works_at, a new job title for role). target_fact_id = the replaced fact's id.
- DELETE: the new fact says an existing fact is no longer true ("no longer works at Google").
  target_fact_id = that fact's id.
- NOOP: it is already known (same meaning, maybe other words). target_fact_id = the fact that
  already says it.
target_fact_id must be one of the ids listed, or null for ADD.
Reply with ONE JSON object and nothing else, matching this JSON schema:
{schema}"""

MAX_ECHOED_REPLY = 4000
RETRY_PROMPT = (
    "That reply was not valid: {reason}. Reply again with only the corrected JSON object, "
    "matching the schema exactly. No prose, no code fences."
)


def extraction_prompt(*, text: str, speaker: str, occurred_at: datetime) -> str:
    said = occurred_at.isoformat() if occurred_at.tzinfo else occurred_at.replace(tzinfo=UTC).isoformat()
    return f"Speaker: {speaker or 'user'}\nSaid at: {said} ({occurred_at:%A})\nMessage:\n<<<\n{text}\n>>>"


def decide_prompt(*, fact: ExtractedFact, candidates: list[dict]) -> str:
    lines = [
        f"New fact: {fact.sentence}",
        f"  subject={fact.subject!r} attribute={fact.attribute!r} value={fact.value!r}"
        + (f" previous_value={fact.previous_value!r}" if fact.previous_value else "")
        + (" negated=true" if fact.negated else ""),
        "Active facts:",
    ]
    for c in candidates:
        lines.append(f"- id={c['id']} attribute={c.get('attribute')!r} value={c.get('value')!r}: {c.get('sentence', '')}")
    return "\n".join(lines)


# --- remote clients ---------------------------------------------------------------------------


class _RemoteLLM:
    """What the Ollama and OpenAI clients share: the prompts, the validate-and-retry loop and the
    clean-up of what models write. Subclasses send one chat and return the reply's text."""

    is_offline = False
    name: str
    timeout: float
    max_attempts: int

    def _chat(self, messages: list[dict], schema: dict) -> str:
        raise NotImplementedError

    def complete_json(self, *, system: str, user: str, schema: type[T]) -> T:
        """Ask for one JSON object of `schema`; retried with the error until it validates."""
        return self._complete(system=system, user=user, schema=schema)

    def _complete(self, *, system: str, user: str, schema: type[T], check=None) -> T:
        json_schema = schema_for_prompt(schema)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        reason = ""
        for _ in range(self.max_attempts):
            reply = self._chat(messages, json_schema)
            try:
                result = _validate(reply, schema)
                problem = check(result) if check else None
                if problem:
                    raise _Invalid(problem)
                return result
            except _Invalid as exc:
                reason = str(exc)
            # The bad reply goes back (shortened: a runaway reply must not snowball the prompt).
            messages = [
                *messages,
                {"role": "assistant", "content": reply[:MAX_ECHOED_REPLY]},
                {"role": "user", "content": RETRY_PROMPT.format(reason=reason)},
            ]
        times = "once" if self.max_attempts == 1 else f"{self.max_attempts} times"
        raise LLMError(f"The model ({self.name}) returned invalid JSON {times}: {reason}", retryable=False)

    def extract(self, *, text: str, speaker: str, occurred_at: datetime) -> Extraction:
        system = EXTRACTION_SYSTEM.replace("{schema}", json.dumps(schema_for_prompt(Extraction)))
        user = extraction_prompt(text=text, speaker=speaker, occurred_at=occurred_at)
        extraction = self._complete(system=system, user=user, schema=Extraction)
        return tidy_extraction(extraction, speaker=speaker, occurred_at=occurred_at)

    def decide(self, *, fact: ExtractedFact, candidates: list[dict]) -> ReconcileDecision:
        """ADD / UPDATE / DELETE / NOOP for `fact` against `candidates` ([{id, attribute, value,
        sentence}]). With no candidates there is nothing to weigh: ADD (NOOP for a negated fact,
        which has nothing to retract) without asking the model."""
        if not candidates:
            if fact.negated:
                return ReconcileDecision(action="NOOP", reason="nothing active to retract")
            return ReconcileDecision(action="ADD", reason="no similar active facts")
        ids = {str(c["id"]) for c in candidates}

        def check(decision: ReconcileDecision) -> str | None:
            if decision.action != "ADD" and decision.target_fact_id not in ids:
                return f"target_fact_id must be one of {sorted(ids)} for {decision.action}, not {decision.target_fact_id!r}"
            return None

        system = DECIDE_SYSTEM.replace("{schema}", json.dumps(schema_for_prompt(ReconcileDecision)))
        user = decide_prompt(fact=fact, candidates=candidates)
        decision = self._complete(system=system, user=user, schema=ReconcileDecision, check=check)
        if decision.action == "ADD":
            decision.target_fact_id = None
        return decision


class OllamaLLM(_RemoteLLM):
    def __init__(self, *, url: str, model: str, timeout: float, max_attempts: int):
        import ollama

        self.url, self.model, self.timeout, self.max_attempts = url, model, timeout, max_attempts
        self.name = f"ollama:{model}"
        self._client = ollama.Client(host=url, timeout=timeout)

    def _chat(self, messages: list[dict], schema: dict) -> str:
        import ollama

        try:
            response = self._client.chat(model=self.model, messages=messages, format=schema, options={"temperature": 0})
        except httpx.TimeoutException:
            raise LLMError(f"{self.name} at {self.url} timed out after {self.timeout:g} s", retryable=True) from None
        except (ConnectionError, httpx.TransportError) as exc:
            raise LLMError(f"{self.name}: Ollama at {self.url} is unreachable ({_short(exc)})", retryable=True) from None
        except ollama.ResponseError as exc:
            code = exc.status_code
            message = f"{self.name}: Ollama at {self.url} answered HTTP {code}: {_short(exc.error)}"
            raise LLMError(message, retryable=code >= 500 or code == 429) from None
        return response.message.content or ""


class OpenAILLM(_RemoteLLM):
    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float, max_attempts: int):
        import openai

        if not api_key and not base_url:
            raise LLMError("LLM_PROVIDER=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server).")
        self.base_url = base_url or "https://api.openai.com/v1"
        self.model, self.timeout, self.max_attempts = model, timeout, max_attempts
        self.name = f"openai:{model}"
        # Local OpenAI-compatible servers often need no key, but the client insists on one.
        self._client = openai.OpenAI(api_key=api_key or "unset", base_url=base_url or None, timeout=timeout, max_retries=0)

    def _chat(self, messages: list[dict], schema: dict) -> str:
        import openai

        try:
            # No temperature: reasoning models reject anything but the default.
            response = self._client.chat.completions.create(model=self.model, messages=messages, response_format={"type": "json_object"})
        except openai.APITimeoutError:
            raise LLMError(f"{self.name} at {self.base_url} timed out after {self.timeout:g} s", retryable=True) from None
        except openai.APIConnectionError as exc:
            raise LLMError(f"{self.name}: {self.base_url} is unreachable ({_short(exc)})", retryable=True) from None
        except openai.APIStatusError as exc:
            code = exc.status_code
            detail = re.sub(r"^Error code: \d+ - ", "", str(exc.message))
            message = f"{self.name}: {self.base_url} answered HTTP {code}: {_short(detail)}"
            raise LLMError(message, retryable=code >= 500 or code == 429) from None
        if not response.choices:
            return ""
        message = response.choices[0].message
        return message.content or (f"(refused: {message.refusal})" if getattr(message, "refusal", None) else "")


# --- validation and clean-up ------------------------------------------------------------------


class _Invalid(Exception):
    pass


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def _validate(reply: str, schema: type[T]) -> T:
    """The reply as `schema`, or _Invalid with a reason short enough to show the model and a person."""
    text = (reply or "").strip()
    if fenced := _FENCE.match(text):
        text = fenced.group(1)  # models wrap JSON in code fences despite being told not to
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        shown = text[:60] + ("…" if len(text) > 60 else "")
        raise _Invalid(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}; the reply began {shown!r})") from None
    if not isinstance(data, dict):
        raise _Invalid(f"expected a JSON object, got {type(data).__name__}")
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'object'}: {err['msg']}" for err in exc.errors()[:5])
        raise _Invalid(f"JSON does not match the {schema.__name__} schema ({problems})") from None


def _short(value) -> str:
    text = " ".join(str(value).split())
    return text[:200] + ("…" if len(text) > 200 else "")


@functools.cache
def schema_for_prompt(schema: type[BaseModel]) -> dict:
    """The model's JSON schema with $defs inlined: Ollama's grammar and small models both cope
    better with one self-contained object."""
    raw = schema.model_json_schema()
    defs = raw.pop("$defs", {})

    def inline(node):
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].split("/")[-1]])
            # "format": "date-time" would make a grammar insist on a time of day; a date will do.
            return {k: inline(v) for k, v in node.items() if k not in {"title", "format"}}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(raw)


_SPEAKER_WORDS = {"i", "me", "myself", "user", "the user", "speaker", "the speaker", "we", "us"}


def tidy_extraction(extraction: Extraction, *, speaker: str, occurred_at: datetime) -> Extraction:
    """What models get wrong without being invalid: "I" as a subject, dates without a time zone,
    entities they forgot to list."""
    speaker = (speaker or "").strip() or "user"
    tz = occurred_at.tzinfo or UTC

    def aware(value: datetime | None) -> datetime | None:
        return value.replace(tzinfo=tz) if value is not None and value.tzinfo is None else value

    facts = []
    for fact in extraction.facts:
        subject = speaker if fact.subject.strip().lower() in _SPEAKER_WORDS else fact.subject
        facts.append(fact.model_copy(update={"subject": subject, "valid_from": aware(fact.valid_from)}))
    entities, known = [], set()
    for entity in extraction.entities:
        name = speaker if entity.name.strip().lower() in _SPEAKER_WORDS else entity.name
        if name.lower() not in known:
            entities.append(entity.model_copy(update={"name": name}))
            known.add(name.lower())
    for fact in facts:
        if fact.subject.lower() not in known:
            entities.append(ExtractedEntity(name=fact.subject, kind="person", role="actor"))
            known.add(fact.subject.lower())
        if fact.object_entity and fact.object_entity.lower() not in known:
            role = "location" if fact.object_kind == "place" else "object"
            entities.append(ExtractedEntity(name=fact.object_entity, kind=fact.object_kind, role=role))
            known.add(fact.object_entity.lower())
    return extraction.model_copy(update={"facts": facts, "entities": entities, "occurred_at": aware(extraction.occurred_at)})
