"""One model pass for many rows: embed distinct texts once, store them under several targets.

The embedder is the slow part, so callers embed everything an operation needs in one batch
(outside any transaction) and then store the vectors through retrieval.embeddings."""

from collections.abc import Iterable, Sequence

from memoryweb.providers.embedders import Embedder, get_embedder
from memories.models import Scope
from retrieval.embeddings import embed_and_store


class Vectors:
    """Vectors of a batch of texts, computed by one embedder call."""

    def __init__(self, texts: Iterable[str], embedder: Embedder | None = None):
        self.embedder = embedder or get_embedder()
        distinct = list(dict.fromkeys(t for t in texts if t))
        self._by_text = dict(zip(distinct, self.embedder.embed(distinct))) if distinct else {}
        # The same name and dimension as the real embedder, so rows are keyed by its model.
        self.name = self.embedder.name
        self.dim = self.embedder.dim

    def get(self, text: str) -> list[float] | None:
        return self._by_text.get(text)

    def embed(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._by_text]
        if missing:
            self._by_text.update(zip(missing, self.embedder.embed(missing)))
        return [self._by_text[t] for t in texts]

    def store(self, *, scope: Scope, target_type: str, items: Sequence[tuple[int, str]]) -> int:
        return embed_and_store(scope=scope, target_type=target_type, items=items, embedder=self)
