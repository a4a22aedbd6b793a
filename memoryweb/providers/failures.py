"""How a remote model's failure reads, and whether it is worth trying again later.

The language-model clients and the embedders share the `ollama` and `openai` libraries, so they
share this reading of their errors: timeouts, unreachable servers, rate limits (429) and server
errors (5xx) may pass, so they are `retryable` (a task backs off and tries again); any other HTTP
error (400 bad request, 401, 404 unknown model …) gets the same answer every time, so it is not.
"""

import re


class ModelError(Exception):
    """A remote model (language model or embedder) failed. The message says why, in one sentence."""

    def __init__(self, message: str, *, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


def retryable_status(code: int) -> bool:
    return code == 429 or code >= 500


def ollama_failure(exc: Exception, *, who: str, url: str, timeout: float) -> tuple[str, bool] | None:
    """(message, retryable) for an error the `ollama` client raised; None for any other error."""
    import httpx
    import ollama

    if isinstance(exc, httpx.TimeoutException):
        return f"{who} at {url} timed out after {timeout:g} s", True
    if isinstance(exc, (ConnectionError, httpx.TransportError)):
        return f"{who}: Ollama at {url} is unreachable ({short(exc)})", True
    if isinstance(exc, ollama.ResponseError):
        code = exc.status_code
        return f"{who}: Ollama at {url} answered HTTP {code}: {short(exc.error)}", retryable_status(code)
    return None


def openai_failure(exc: Exception, *, who: str, url: str, timeout: float) -> tuple[str, bool] | None:
    """(message, retryable) for an error the `openai` client raised; None for any other error."""
    import openai

    if isinstance(exc, openai.APITimeoutError):  # a subclass of APIConnectionError: first
        return f"{who} at {url} timed out after {timeout:g} s", True
    if isinstance(exc, openai.APIConnectionError):
        return f"{who}: {url} is unreachable ({short(exc)})", True
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        detail = re.sub(r"^Error code: \d+ - ", "", str(exc.message))
        return f"{who}: {url} answered HTTP {code}: {short(detail)}", retryable_status(code)
    return None


def short(value) -> str:
    text = " ".join(str(value).split())
    return text[:200] + ("…" if len(text) > 200 else "")
