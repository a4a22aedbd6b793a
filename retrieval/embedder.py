"""Which embedder a scope's vectors are on.

A scope's search-document vectors are made with one model, recorded in `IndexState.model`. Recall
must embed the question with that model, and indexing must give new documents vectors of it,
whatever EMBEDDER says now: changing EMBEDDER does not move existing scopes (their vectors would be
useless to a query embedded by another model); `memoryweb reindex --model NAME` does, filling the new
model's vectors beside the old ones and switching `IndexState.model` when they are complete
(`retrieval/reindex.py`). EMBEDDER is the model of scopes not indexed yet, and of entity resolution.
"""

import logging

from memoryweb.providers.embedders import Embedder, configured_embedder_name, embedder_named, get_embedder
from memories.models import Scope
from retrieval.models import IndexState

logger = logging.getLogger("memoryweb.retrieval")


def scope_model(scope: Scope) -> str:
    """The model the scope's vectors were made with ("" when it has no index yet)."""
    return IndexState.objects.filter(scope=scope).values_list("model", flat=True).first() or ""


def scope_embedder(scope: Scope, *, model: str | None = None) -> Embedder:
    """The embedder of the scope's model; the configured one for a scope not indexed yet, or when
    this process cannot build the scope's model (then the index task re-embeds the scope with the
    configured one, as it always did, and switches to it when that is complete). `model`: the
    scope's model when the caller has read it already ("" for none)."""
    name = scope_model(scope) if model is None else model
    if not name or name == configured_embedder_name():
        return get_embedder()
    embedder = embedder_named(name)
    if embedder is None:
        logger.warning("scope %s: its vectors are %s, which this process cannot build; using %s", scope.slug, name,
                       configured_embedder_name())
        return get_embedder()
    return embedder
