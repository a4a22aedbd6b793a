"""The local embedder (the bundled all-MiniLM-L6-v2): real vectors, one encoding thread for every
caller, and a forked child that still embeds."""

import threading

import pytest

from memoryweb.providers.embedders import LocalEmbedder
from tests.providers.local_model import in_forked_child

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder():
    return LocalEmbedder()


def test_it_embeds_the_same_from_any_thread(embedder):
    expected = embedder.embed(["I moved from San Francisco to New York"])[0]
    assert len(expected) == embedder.dim == 384 and abs(sum(v * v for v in expected) - 1) < 1e-4
    results, threads = [], []
    for _ in range(4):
        threads.append(threading.Thread(target=lambda: results.append(embedder.embed(["I moved from San Francisco to New York"])[0])))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 4 and all(max(abs(a - b) for a, b in zip(r, expected)) < 1e-5 for r in results)
    assert embedder._thread._max_workers == 1


def test_a_forked_child_embeds_on_a_thread_of_its_own(embedder):
    embedder.embed(["warm"])  # the parent's encoding thread exists, and a child does not inherit it
    # The child must not wait forever on the parent's thread.
    assert in_forked_child(lambda: str(len(embedder.embed(["hello from the child"])[0]))) == "384"
