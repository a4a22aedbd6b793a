"""Language-model clients: which one is in force, and the clients themselves.

`get_llm()` returns the client for LLM_PROVIDER:

- `offline`: no model and no network (`is_offline`); callers use their own rules instead
  (extraction: `memories.extraction.offline`; answers: the best evidence).
- `ollama`: the official `ollama` client against OLLAMA_URL, structured output via `format=<JSON schema>`.
- `openai`: the official `openai` client (OPENAI_BASE_URL lets any OpenAI-compatible server serve),
  `response_format={"type": "json_object"}` with the schema in the prompt: JSON mode works on
  every compatible server, which strict `json_schema` mode does not (it also rejects our optional
  fields); the pydantic validation below is what we rely on either way.
- `auto`: `ollama` when it answers at OLLAMA_URL, else `offline`.

Every client has `.name`, `.is_offline` and one generic call, `complete_json(system=, user=,
schema=, check=None)`: one JSON object of any pydantic `schema`. What to ask (the extraction and
reconcile prompts, the answer prompt) belongs to the callers. A reply is validated against the
schema (and `check`, for what a schema cannot say); invalid JSON, or JSON that does not fit, is
sent back to the model with the validation error, up to LLM_MAX_ATTEMPTS times in all; then
`LLMError(retryable=False)`. Failures of the server are not retried here: timeouts (LLM_TIMEOUT),
unreachable servers, rate limits (429) and server errors (5xx) raise `LLMError(retryable=True)`
at once, so a task can back off and try again later; other HTTP errors (400, 401, 404 …) raise
`LLMError(retryable=False)`, since asking again gets the same answer.
"""

import functools
import json
import re
from collections.abc import Callable
from typing import Protocol, TypeVar

import httpx
from django.conf import settings
from pydantic import BaseModel, ValidationError

from memoryweb.providers.failures import ModelError, ollama_failure, openai_failure

T = TypeVar("T", bound=BaseModel)


class LLMError(ModelError):
    """The language model could not give a usable answer. The message says why, in one sentence.

    `retryable` is True for timeouts, unreachable servers, rate limits and server errors (worth
    trying again later), False for invalid output after every attempt, refused requests and
    configuration mistakes."""


# What else a reply must satisfy, beyond its schema: None when it does, else the reason (shown
# to the model on the next attempt).
Check = Callable[[T], str | None]


class LLM(Protocol):
    name: str
    is_offline: bool

    def complete_json(self, *, system: str, user: str, schema: type[T], check: Check | None = None) -> T: ...


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
    """No language model: callers check `is_offline` and use their own rules."""

    name = "offline"
    is_offline = True

    def complete_json(self, *, system: str, user: str, schema: type[T], check: Check | None = None) -> T:
        raise NotImplementedError("The offline provider has no language model; check `is_offline` first.")


# --- remote clients ---------------------------------------------------------------------------


MAX_ECHOED_REPLY = 4000
RETRY_PROMPT = (
    "That reply was not valid: {reason}. Reply again with only the corrected JSON object, "
    "matching the schema exactly. No prose, no code fences."
)


class _RemoteLLM:
    """What the Ollama and OpenAI clients share: the validate-and-re-ask loop. Subclasses send
    one chat and return the reply's text."""

    is_offline = False
    name: str
    timeout: float
    max_attempts: int

    def _chat(self, messages: list[dict], schema: dict) -> str:
        raise NotImplementedError

    def complete_json(self, *, system: str, user: str, schema: type[T], check: Check | None = None) -> T:
        """Ask for one JSON object of `schema`; re-asked with the error until it validates."""
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


class OllamaLLM(_RemoteLLM):
    def __init__(self, *, url: str, model: str, timeout: float, max_attempts: int):
        import ollama

        self.url, self.model, self.timeout, self.max_attempts = url, model, timeout, max_attempts
        self.name = f"ollama:{model}"
        self._client = ollama.Client(host=url, timeout=timeout)

    def _chat(self, messages: list[dict], schema: dict) -> str:
        try:
            response = self._client.chat(model=self.model, messages=messages, format=schema, options={"temperature": 0})
        except Exception as exc:
            failure = ollama_failure(exc, who=self.name, url=self.url, timeout=self.timeout)
            if failure is None:
                raise
            raise LLMError(failure[0], retryable=failure[1]) from None
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
        try:
            # No temperature: reasoning models reject anything but the default.
            response = self._client.chat.completions.create(model=self.model, messages=messages, response_format={"type": "json_object"})
        except Exception as exc:
            failure = openai_failure(exc, who=self.name, url=self.base_url, timeout=self.timeout)
            if failure is None:
                raise
            raise LLMError(failure[0], retryable=failure[1]) from None
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
