"""Healing: background work that was lost or left behind is done again. Idempotent, so the
periodic task (`retrieval.heal`, Celery beat) and `memoryweb heal` may run it any time.

- extraction: episodes left pending or stuck in processing are queued again
  (`memories.services.heal.episodes_heal`);
- entity vectors (used by entity resolution) that are missing for the embedding model in force
  are computed: an extraction stores them after its commit, and a failure there is only logged;
- a scope whose search index is behind its rows (a lost `retrieval.index_scope` message, a run
  that failed after its retries) gets `retrieval.index_scope` queued. Behind means behind for the
  model its vectors are on (`retrieval/embedder.py`): a new EMBEDDER moves a scope only through
  `memoryweb reindex`. So does a large scope with BM25 packs due (retrieval/packs.py: a
  forgetting or an erasure deleted some, and nobody has written to the scope since): the index
  run ends by packing them again.

It lives here, above memories, because telling whether a scope's index is behind means reading
retrieval's own tables; memories alone could only queue every recently changed scope, on every
run, so a second run would never find nothing to do.
"""

from dataclasses import asdict, dataclass

from django.db.models import Exists, OuterRef

from memoryweb.providers.embedders import get_embedder
from memoryweb.queue import enqueue
from memories.models import Embedding, EmbeddingTarget, Entity, Scope
from memories.services.heal import HEAL_BATCH, episodes_heal
from memories.services.vectors import embed_and_store
from retrieval.embedder import scope_model
from retrieval.indexing import index_behind
from retrieval.packs import packs_due


@dataclass
class HealReport:
    pending_episodes: int = 0  # pending too long (their message lost): queued again
    stale_episodes: int = 0  # processing under a stale claim (their worker died): queued again
    entity_vectors: int = 0  # entity vectors computed for the embedding model in force
    search_indexes: int = 0  # scopes whose search index was behind (or BM25 packs due): indexing queued

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @property
    def total(self) -> int:
        return sum(self.as_dict().values())


def heal(*, scope: Scope | None = None) -> HealReport:
    """Heal `scope`, or every scope; returns what was done, by kind (all zero when nothing was
    left behind)."""
    report = HealReport(**episodes_heal(scope=scope))
    embedder = get_embedder()
    report.entity_vectors = entity_vectors_backfill(scope=scope, embedder=embedder)
    scopes = [scope] if scope is not None else Scope.objects.order_by("id")
    for each in scopes:
        if index_behind(scope=each, model=scope_model(each) or embedder.name) or packs_due(scope=each):
            enqueue("retrieval.index_scope", each.pk)
            report.search_indexes += 1
    return report


def entity_vectors_backfill(*, scope: Scope | None, embedder, limit: int = HEAL_BATCH) -> int:
    """Vectors for entities that have none for the embedder's model (at most `limit` a call):
    an index-backed anti-join on the embedding's unique (target_type, target_id, model)."""
    has_vector = Embedding.objects.filter(target_type=EmbeddingTarget.ENTITY, target_id=OuterRef("pk"), model=embedder.name)
    entities = Entity.objects.all() if scope is None else Entity.objects.in_scope(scope)
    missing = list(entities.filter(~Exists(has_vector)).order_by("scope_id", "id").values_list("scope_id", "id", "name")[:limit])
    by_scope: dict[int, list[tuple[int, str]]] = {}
    for scope_id, pk, name in missing:
        by_scope.setdefault(scope_id, []).append((pk, name))
    scopes = Scope.objects.in_bulk(list(by_scope))
    return sum(
        embed_and_store(scope=scopes[scope_id], target_type=EmbeddingTarget.ENTITY, items=items, embedder=embedder)
        for scope_id, items in by_scope.items()
    )
