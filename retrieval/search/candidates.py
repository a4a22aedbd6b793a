"""The candidate lists, each at most `pool` long: BM25 per collection, nearest vectors per
collection, the facts of the entities the question names, for "what changed" the facts that
began in the window, and while the index is behind, the un-indexed rows matched on their text.

Outside a transaction the vector searches (one per collection) and the entity look-ups run on
pool threads, each on its own connection, beside BM25 on the caller's (retrieval/concurrent.py).
"""

import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from django.db.models import Q

from memoryweb.providers.embedders import Embedder
from memories.models import Entity, Fact, FactStatus
from retrieval.concurrent import side_by_side
from retrieval.fulltext import Hit, bm25_candidates, unindexed_candidates
from retrieval.indexing import Backlog
from retrieval.intents import attributes_asked
from retrieval.search.eligibility import document_filter, fact_eligible
from retrieval.search.question import Question, entities_named, named_speaker
from retrieval.vector import VectorHit, vector_candidates, vector_search_exact


@dataclass
class Candidates:
    bm25: dict[str, list[Hit]] = field(default_factory=dict)
    vectors: dict[str, list[VectorHit]] = field(default_factory=dict)
    entities: list[Entity] = field(default_factory=list)
    entity_facts: list[Fact] = field(default_factory=list)
    changed: list[Fact] = field(default_factory=list)
    unindexed: dict[str, list[Hit]] = field(default_factory=dict)


# Inside `candidates_memo()`, the lists of a question asked again are the ones gathered the first
# time: the cross-validation (retrieval/cv.py) re-fuses the same lists under each setting.
_memo: ContextVar[dict | None] = ContextVar("candidates_memo", default=None)


@contextmanager
def candidates_memo():
    """Gather each question's candidate lists once within the block. For measuring settings that
    act after the lists (fusion, lanes) only: the lists themselves are not recomputed."""
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def candidates_gather(
    q: Question, *, lexemes: list[str], query_vector: list[float] | None, embedder: Embedder, collections: list[str],
    pool: int, backlog: Backlog, searchable: list[str], timings: dict,
) -> Candidates:
    """Every list for `q`. `collections`: those with documents; `searchable`: every collection
    the question's kinds may use (un-indexed rows may belong to one with no document yet)."""
    memo = _memo.get()
    if memo is None:
        return _gather(q, lexemes=lexemes, query_vector=query_vector, embedder=embedder, collections=collections,
                       pool=pool, backlog=backlog, searchable=searchable, timings=timings)
    key = (q.scope.pk, q.text, repr(q.window), q.as_of, q.history, q.changes, q.kinds, q.speaker_filter,
           getattr(q.speaker_entity, "pk", None), pool, tuple(collections), backlog.pending)
    if key not in memo:
        memo[key] = _gather(q, lexemes=lexemes, query_vector=query_vector, embedder=embedder, collections=collections,
                            pool=pool, backlog=backlog, searchable=searchable, timings=timings)
    return memo[key]


def _gather(
    q: Question, *, lexemes: list[str], query_vector: list[float] | None, embedder: Embedder, collections: list[str],
    pool: int, backlog: Backlog, searchable: list[str], timings: dict,
) -> Candidates:
    scope = q.scope
    started = time.perf_counter()
    lap: dict[str, float] = {}

    def lexical():
        t0 = time.perf_counter()
        doc_filter, params = document_filter(q) if collections else ("", [])
        hits = bm25_candidates(
            scope=scope, lexemes=lexemes, collections=collections, limit=pool, doc_filter=doc_filter, params=params,
            speaker=named_speaker(scope, q.text, q.speakers),
        ) if collections else {}
        unindexed = unindexed_candidates(scope=scope, lexemes=lexemes, collections=searchable, backlog=backlog, limit=pool)
        lap["bm25"] = time.perf_counter() - t0
        return hits, unindexed

    def semantic(collection: str):
        def search():
            t0 = time.perf_counter()
            hits = vector_candidates(scope=scope, query_vector=query_vector, embedder=embedder, collections=[collection], limit=pool,
                                     exact=exact)
            lap[f"vector {collection}"] = time.perf_counter() - t0
            return hits
        return search

    def structured():
        """Facts of the entities the question names, and for "what changed" the facts that began
        in the window: lists that need no search."""
        t0 = time.perf_counter()
        entities, facts, changed = [], [], []
        if "fact" in q.kinds:
            entities = entities_named(scope, q.text, q.speaker_entity)
            facts = _entity_facts(q, entities) if entities else []
            changed = _changed_facts(q) if q.changes else []
        lap["entities"] = time.perf_counter() - t0
        return entities, facts, changed

    if collections:
        # Whether the scope is small enough to search exactly: asked once, not per collection.
        exact = vector_search_exact(scope=scope, embedder=embedder)
        # One nearest-neighbour search per collection, each on its own connection.
        (bm25, unindexed), (entities, entity_facts, changed), *per_collection = side_by_side(
            lexical, structured, *(semantic(collection) for collection in collections)
        )
        vectors = {collection: hits for found in per_collection for collection, hits in found.items()}
    else:
        (bm25, unindexed), (entities, entity_facts, changed) = lexical(), structured()
        vectors = {}
    # These overlap; "candidates" is what the caller waited for all of them ("vector": the slowest).
    vector_laps = [seconds for name, seconds in lap.items() if name.startswith("vector ")]
    timings.update(
        bm25=lap.get("bm25", 0.0), vector=max(vector_laps, default=0.0), entities=lap["entities"],
        candidates=time.perf_counter() - started,
    )
    return Candidates(bm25, vectors, entities, entity_facts, changed, unindexed)


def _entity_facts(q: Question, entities: list[Entity]) -> list[Fact]:
    """The eligible facts about the named entities (as subject or object), the attribute the
    question asks about first, then the active ones, then the newest."""
    attributes = attributes_asked(q.text)
    facts = Fact.objects.in_scope(q.scope).filter(Q(subject__in=entities) | Q(object_entity__in=entities))
    rows = list(facts.filter(fact_eligible(q)).select_related("subject").order_by("-valid_from", "-id")[:200])
    rows.sort(key=lambda f: (f.attribute not in attributes, f.status != FactStatus.ACTIVE))
    return rows


def _changed_facts(q: Question) -> list[Fact]:
    """Facts that began inside the window, the ones that replaced an older value first."""
    facts = Fact.objects.in_scope(q.scope).exclude(status=FactStatus.RETRACTED)
    if q.window.start is not None:
        facts = facts.filter(valid_from__gte=q.window.start)
    if q.window.end is not None:
        facts = facts.filter(valid_from__lt=q.window.end)
    rows = list(facts.order_by("-valid_from", "-id")[:200])
    rows.sort(key=lambda f: f.supersedes_id is None)
    return rows
