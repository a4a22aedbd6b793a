"""Reindexing a scope to a new embedding model, beside the old one, switching atomically.

`scope_reindex(principal=, scope=, model="local")` embeds, in batches of MEMORYWEB_REINDEX_BATCH,
every search document and entity name of the scope that has no vector for the new model yet, and
stores them beside the old model's (`Embedding` rows are keyed by model). Each batch is embedded
and committed under the scope's indexing lock, so an indexer, a forgetting or an erasure waits for
one batch at most and never sees a vector of text it just changed; an interrupted run keeps every
batch it committed, and the next run embeds only what is still missing.

The switch: when a batch finds nothing missing — checked under the lock, which every writer of
documents holds, so nothing can arrive between the check and the update — `IndexState.model`
becomes the new model in one UPDATE. Until then recall embeds the question with the old model and
searches the old vectors (`retrieval/embedder.py: scope_embedder`), and indexers give new
documents old-model vectors (which the following batches fill for the new model too); from then on
both use the new model. `vectors_drop_old` removes the other models' vectors of a scope, and only
once the scope is on the new model.

A large scope (RETRIEVAL_SCOPE_GRAPH_AT documents, or graphs of its own already) gets the new
model's vectors as a bulk index run writes them: outside every graph, then its own graphs for the
new model built once (CONCURRENTLY, outside the lock) before the switch. An interrupted run
leaves them outside; the next run builds the graphs, then switches.
"""

import time
from dataclasses import asdict, dataclass
from collections.abc import Callable

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.audit import audit_record
from accounts.permissions import Access, Principal, require
from memoryweb.errors import Conflict, InvalidInput
from memoryweb.providers.embedders import Embedder, configured_embedder_name, embedder_build
from memories.models import Embedding, EmbeddingTarget, Scope
from memories.services.vectors import scope_graphs, scope_graphs_build, scope_graphs_drop_on_commit
from retrieval.embedder import scope_model
from retrieval.heal import entity_vectors_backfill
from retrieval.indexing import documents_embed_missing, reindex_into_own_graphs, scope_lock, vectors_outside_graphs
from retrieval.models import IndexState


@dataclass
class ReindexReport:
    scope: str
    from_model: str  # the model the scope was on when the run began ("" if it had no index)
    model: str  # the model reindexed to
    embedded: int  # vectors this run wrote
    missing_at_start: int  # vectors the new model lacked when the run began
    switched: bool  # the scope is on the new model now
    dropped: int | None = None  # old vectors removed (None: not asked)
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        """Vectors per second this run."""
        return round(self.embedded / self.seconds, 1) if self.seconds > 0 else 0.0

    def as_dict(self) -> dict:
        return {**asdict(self), "vectors_per_second": self.rate}


def reindex_embedder(model: str) -> Embedder:
    """The embedder `--model` names (`local`, `hash`, `ollama:nomic-embed-text` …); InvalidInput, naming
    the known ones, for a name the project does not know."""
    try:
        return embedder_build(model)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def missing_vectors(*, scope: Scope, model: str) -> int:
    """How many of the scope's documents and entities have no vector for `model`."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM retrieval_searchdocument d WHERE d.scope_id = %s AND NOT EXISTS ("
            "  SELECT 1 FROM retrieval_embedding e WHERE e.target_type = 'doc_' || d.collection AND e.target_id = d.id AND e.model = %s))"
            " + (SELECT count(*) FROM memories_entity n WHERE n.scope_id = %s AND NOT EXISTS ("
            "  SELECT 1 FROM retrieval_embedding e WHERE e.target_type = %s AND e.target_id = n.id AND e.model = %s))",
            [scope.pk, model, scope.pk, EmbeddingTarget.ENTITY, model],
        )
        return cursor.fetchone()[0]


def scope_reindex(
    *, principal: Principal | None, scope: Scope, model: str, batch_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ReindexReport:
    """Fill the scope's vectors for `model` and switch the scope to it (see the module doc).
    `progress(done, total)` is called after each committed batch. Editors and admins."""
    require(principal, scope, Access.WRITE)
    embedder = reindex_embedder(model)
    batch = batch_size or settings.MEMORYWEB_REINDEX_BATCH
    if batch < 1:
        raise InvalidInput("The batch size must be at least 1.")
    started = time.perf_counter()
    before = scope_model(scope)
    missing = missing_vectors(scope=scope, model=embedder.name)
    report = ReindexReport(scope=scope.slug, from_model=before, model=embedder.name, embedded=0, missing_at_start=missing,
                           switched=before == embedder.name)
    own_graphs = reindex_into_own_graphs(scope=scope, model=embedder.name)
    while not report.switched:
        build = False
        with scope_lock(scope):
            with vectors_outside_graphs(own_graphs):
                written = documents_embed_missing(scope=scope, embedder=embedder, limit=batch)
            if not written:
                written = entity_vectors_backfill(scope=scope, embedder=embedder, limit=batch)
            if not written:
                build = own_graphs and not scope_graphs(scope_id=scope.pk, model=embedder.name)
                if not build:
                    _switch(principal=principal, scope=scope, before=before, embedder=embedder)
                    report.switched = True
        if build:
            # Outside the lock (CONCURRENTLY, indexers go on); the next round embeds what came
            # meanwhile, into these graphs by their predicate, and switches.
            own_graphs = bool(scope_graphs_build(scope=scope, embedder=embedder))  # none built: nothing to switch onto them
        report.embedded += written
        if written and progress:
            progress(report.embedded, max(missing, report.embedded))
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _switch(*, principal: Principal | None, scope: Scope, before: str, embedder: Embedder) -> None:
    """Nothing is missing for the new model (the caller holds the scope's lock): the scope is on it."""
    with transaction.atomic():
        state, _ = IndexState.objects.select_for_update().get_or_create(scope=scope)
        IndexState.objects.filter(pk=state.pk).update(model=embedder.name, updated_at=timezone.now())
        audit_record(principal=principal, action="scope.reindex", target_type="scope", target_id=scope.public_id, scope=scope,
                     before={"model": before}, after={"model": embedder.name})


def vectors_drop_old(*, principal: Principal | None, scope: Scope, model: str) -> int:
    """Delete the scope's vectors of every model but `model` (the old ones), once the scope is on
    `model`; refused (Conflict) before the switch, when recall still needs them. Returns how many went."""
    require(principal, scope, Access.WRITE)
    embedder = reindex_embedder(model)
    with scope_lock(scope), transaction.atomic():
        current = scope_model(scope)
        if current != embedder.name:
            raise Conflict(
                f"Scope {scope.slug!r} is not on {embedder.name} yet (its vectors are {current or 'not indexed'}), so its old"
                f" vectors stay: run `memoryweb reindex --scope {scope.slug} --model {model}` without --drop-old first."
            )
        old = Embedding.objects.filter(scope=scope).exclude(model=embedder.name)
        models = sorted(set(old.values_list("model", flat=True)))
        dropped = old.delete()[0]
        scope_graphs_drop_on_commit(scope_id=scope.pk, keep_model=embedder.name)  # the old models' own graphs
        if dropped:
            audit_record(principal=principal, action="scope.vectors_drop", target_type="scope", target_id=scope.public_id,
                         scope=scope, before={"models": models}, after={"model": embedder.name, "vectors_dropped": dropped})
    return dropped


def model_mismatches() -> list[dict]:
    """Scopes whose vectors are on another model than the one configured (EMBEDDER,
    EMBEDDING_MODEL), with that model: what `memoryweb config` warns about."""
    configured = configured_embedder_name()
    rows = (IndexState.objects.exclude(model="").exclude(model=configured).select_related("scope").order_by("scope__slug"))
    return [{"scope": s.scope.slug, "model": s.model, "configured": configured} for s in rows]
