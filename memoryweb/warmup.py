"""What a server process sets up when it starts.

Its native thread count, before anything loads PyTorch: `native_threads_limit`. A server's
parallelism comes from its requests (and from its worker processes), not from one matrix
product. PyTorch's OpenMP and MKL start a team of one thread per core and keep the idle ones
spinning after each use; on a machine whose cores are busy (the other worker, the database,
the clients, other programs) a team member waiting for a descheduled one spins its time slice
away. Measured on two shared cores (docs/ARCHITECTURE.md, "bench api"): one recall cost its
process 130–170 ms of CPU with a team of two, 26 ms with one thread. The limit applies only
where nobody chose: OMP_NUM_THREADS or MKL_NUM_THREADS set in the environment wins.

Then what the first question would otherwise wait for: the embedding model (seconds for the
local one) and dateparser's language tables (about 0.1 s the first time a question holds a
date), loaded in a background thread, so the server answers at once; a failure (a remote
embedder that is down) is logged and left to the first request, which reports it properly.
MEMORYWEB_WARM_UP=false turns that off."""

import logging
import os
import sys
import threading

from django.conf import settings

logger = logging.getLogger(__name__)

SERVER_NATIVE_THREADS = 1
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def native_threads_limit(threads: int = SERVER_NATIVE_THREADS) -> int:
    """Limit OpenMP and MKL to `threads` per process unless the environment says otherwise, and
    return the count in force. OpenMP reads it once, when PyTorch loads: a process that has
    loaded it already keeps its count (a warning says so)."""
    if "torch" in sys.modules:
        import torch

        in_force = torch.get_num_threads()
        if not any(os.environ.get(name) for name in _THREAD_VARIABLES) and in_force != threads:
            logger.warning("PyTorch loaded before the thread limit: it keeps %s threads", in_force)
        return in_force
    chosen = [os.environ[name] for name in _THREAD_VARIABLES if os.environ.get(name)]
    if chosen:
        return int(chosen[0]) if chosen[0].isdigit() else threads
    for name in _THREAD_VARIABLES:
        os.environ[name] = str(threads)
    return threads


def warm_up() -> None:
    from memoryweb.providers.embedders import get_embedder
    from retrieval import temporal

    try:
        # A question's embedding only: the bfloat16 graph for indexing's large batches (where in
        # force) loads on the first such batch, since torch and the graph cost a process about
        # 300 MB of memory that a server which indexes nothing large should not carry; on a
        # thread of its own, so that batch and the ones after it go through fp32 meanwhile (the
        # load took 8 s under the write mix's load, and every write waited for it).
        embedder = get_embedder()
        if hasattr(embedder, "bf16_in_background"):
            embedder.bf16_in_background = True
        embedder.embed(["warming up"])
        temporal.warm_up()
    except Exception as exc:  # the first request will meet the same error and report it
        logger.warning("warm-up failed (%s: %s); the first request will load what it needs", exc.__class__.__name__, exc)


def warm_up_in_background() -> threading.Thread | None:
    if not settings.MEMORYWEB_WARM_UP:
        return None
    thread = threading.Thread(target=warm_up, name="memoryweb-warm-up", daemon=True)
    thread.start()
    return thread
