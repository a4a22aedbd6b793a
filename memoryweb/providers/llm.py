"""Language-model providers. Filled in by the memory core; here: which one is in force."""

import functools

import httpx
from django.conf import settings


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
