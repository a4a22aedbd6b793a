"""Nearest documents by cosine distance, with pgvector.

The query repeats the partial HNSW index's cast and predicate (`vec::vector(DIM)`, `model = …`,
`NOT deferred`, see memories/services/vectors.py) so the planner can use it. The scope and target-type filters are
applied inside the index scan; with `hnsw.iterative_scan = relaxed_order` the scan goes on past
`ef_search` until it has `limit` rows of this scope, so a small scope inside a big table still
gets its results. Relaxed order can return rows slightly out of order: they are re-sorted.

A scope with fewer than `RETRIEVAL_EXACT_BELOW` vectors of the model, or with vectors the indexer
left out of the graph (`Embedding.deferred`, which it does only in such scopes), is searched exactly instead:
the scope index and a sort by (distance, id), which the HNSW index cannot serve, in one scan for
every collection asked (the best `limit` of each). It is as fast at that size, and its answer
does not depend on the shape of a graph that every scope's inserts
(and rolled-back inserts) have built, so two scopes holding the same documents rank them alike.
"""

from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from memoryweb.providers.embedders import Embedder
from memories.models import Scope
from memories.services.vectors import (
    DOC_TARGET_TYPES, SCOPE_VECTORS_UP_TO, scope_graph_name, scope_graph_predicate, scope_graphs,
)
from retrieval.documents import WINDOW_RADII
from retrieval.indexing import vector_target


@dataclass(frozen=True)
class VectorHit:
    collection: str
    target_id: int  # the SearchDocument's target
    similarity: float


def vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{v:.7g}" for v in vector) + "]"


def vector_candidates(
    *, scope: Scope, query_vector: list[float], embedder: Embedder, collections: list[str], limit: int,
    exact: bool | None = None,
) -> dict[str, list[VectorHit]]:
    """The `limit` nearest documents of the scope in each of `collections`, best first.
    `exact`: `vector_search_exact` for the scope, when the caller asked already (None: asked here)."""
    if not collections or limit <= 0:
        return {}
    dim = int(embedder.dim)
    literal = vector_literal(query_vector)
    exact = vector_search_exact(scope=scope, embedder=embedder) if exact is None else exact
    out: dict[str, list[VectorHit]] = defaultdict(list)
    if exact:
        # One scan of the scope's vectors for every collection, the best `limit` of each kept. Each
        # kept row's document is found by its key (a LATERAL that OFFSET 0 keeps from being
        # flattened): a new scope's statistics say "a few rows", and the planner then joined by
        # scope instead, reading the scope's documents once per row kept (11 ms instead of 2 on a
        # LOCOMO conversation). The same for the graph's rows below.
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                SELECT d.collection, d.target_id, 1 - n.distance AS similarity
                FROM (
                    SELECT x.*, row_number() OVER (PARTITION BY x.target_type ORDER BY x.distance, x.target_id) AS place
                    FROM (
                        SELECT e.target_type, e.target_id, e.vec::vector({dim}) <=> %s::vector({dim}) AS distance
                        FROM retrieval_embedding e
                        WHERE e.model = %s AND e.scope_id = %s AND e.target_type = ANY(%s)
                    ) x
                ) n
                CROSS JOIN LATERAL (SELECT collection, target_id, scope_id FROM retrieval_searchdocument WHERE id = n.target_id OFFSET 0) d
                WHERE d.scope_id = %s AND n.place <= %s
                ORDER BY n.distance, d.target_id
                """,
                [literal, embedder.name, scope.pk, [vector_target(c) for c in collections], scope.pk, limit],
            )
            for c, target_id, similarity in cursor.fetchall():
                out[c].append(VectorHit(c, target_id, float(similarity)))
        return dict(out)
    with transaction.atomic(), connection.cursor() as cursor:
        own = scope_graphs(scope_id=scope.pk, model=embedder.name)
        _hnsw_settings(cursor, limit=limit if own else 0)
        for collection in collections:
            target_type = vector_target(collection)
            if target_type in own:
                # The scope's own graph (a large scope): no filter inside the scan, `ef_search` sized to the pool.
                where, params = scope_graph_predicate(scope_id=scope.pk, target_type=target_type, model=embedder.name)
            elif own:
                # A large scope's vectors are outside the shared graph; a collection with no graph of its
                # own yet (new since the last full index run built them) is read exactly, by the scope index.
                where, params = "e.model = %s AND e.scope_id = %s AND e.target_type = %s", [embedder.name, scope.pk, target_type]
            else:
                where, params = "e.model = %s AND e.scope_id = %s AND e.target_type = ANY(%s) AND NOT e.deferred", [embedder.name, scope.pk, [target_type]]
            cursor.execute(_NEAREST.format(dim=dim, where=where), [literal, *params, literal, limit, scope.pk])
            out[collection].extend(VectorHit(c, target_id, float(similarity)) for c, target_id, similarity in cursor.fetchall())
    return {collection: hits for collection, hits in out.items() if hits}


def speaker_vector_candidates(
    *, scope: Scope, query_vector: list[float], embedder: Embedder, speaker: str, collection: str, limit: int,
) -> list[VectorHit]:
    """The `limit` nearest documents of `collection` that `speaker` said (a window: its centre
    turn's speaker), best first: an exact scan of the scope's vectors of that collection, so
    for small scopes only (the caller asks `vector_search_exact` first)."""
    if limit <= 0:
        return []
    dim = int(embedder.dim)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT d.collection, d.target_id, 1 - (e.vec::vector({dim}) <=> %s::vector({dim})) AS similarity
            FROM retrieval_embedding e
            JOIN retrieval_searchdocument d ON d.id = e.target_id
            WHERE e.model = %s AND e.scope_id = %s AND e.target_type = %s
              AND d.scope_id = %s AND d.collection = %s AND d.speaker = %s
            ORDER BY e.vec::vector({dim}) <=> %s::vector({dim}), d.target_id
            LIMIT %s
            """,
            [vector_literal(query_vector), embedder.name, scope.pk, vector_target(collection), scope.pk, collection, speaker,
             vector_literal(query_vector), limit],
        )
        return [VectorHit(c, target_id, float(similarity)) for c, target_id, similarity in cursor.fetchall()]


def windows_near_turns(
    *, scope: Scope, turns: list[int], query_vector: list[float], embedder: Embedder, collections: list[str],
) -> dict[str, list[VectorHit]]:
    """The windows of `collections` (±1, ±2) that hold one of `turns` (turn ids: the turn graph's
    nearest, best first), each scored exactly from its stored vector, best first. A window's vector is
    the mean of its turns' (RETRIEVAL_WINDOW_VECTORS), so the windows nearest the question mostly hold
    one of the turns nearest it; a window graph misses some of them, as overlapping windows are
    near-duplicates that an HNSW graph searches poorly (docs/ARCHITECTURE.md, "Windows found from
    the turns"). Their lists are the union of both (`_gather`). Neighbours by position in the session
    (a forgotten turn's gap makes a window wider here than the indexer's: a candidate more, scored
    exactly all the same)."""
    radii = {c: WINDOW_RADII[c] for c in collections if c in WINDOW_RADII}
    if not turns or not radii:
        return {}
    dim = int(embedder.dim)
    out: dict[str, list[VectorHit]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH near AS (
                SELECT t2.id AS centre, min(abs(t2.position - t.position)) AS gap
                FROM memories_turn t
                JOIN memories_turn t2 ON t2.session_id = t.session_id AND t2.position BETWEEN t.position - %s AND t.position + %s
                WHERE t.id = ANY(%s) AND t.scope_id = %s
                GROUP BY t2.id
            )
            SELECT d.collection, d.target_id, 1 - (e.vec::vector({dim}) <=> %s::vector({dim})) AS similarity
            FROM near
            JOIN unnest(%s::text[], %s::int[]) AS w(collection, radius) ON near.gap <= w.radius
            JOIN retrieval_searchdocument d ON d.collection = w.collection AND d.target_id = near.centre AND d.scope_id = %s
            -- 'doc_' || collection is `vector_target` (retrieval/indexing.py) in SQL: passed as a third array the plan
            -- took 1.3 ms more
            JOIN retrieval_embedding e ON e.target_type = 'doc_' || d.collection AND e.target_id = d.id AND e.model = %s AND e.scope_id = %s
            ORDER BY similarity DESC, d.target_id
            """,
            [max(radii.values()), max(radii.values()), turns, scope.pk, vector_literal(query_vector),
             list(radii), list(radii.values()), scope.pk, embedder.name, scope.pk],
        )
        for c, target_id, similarity in cursor.fetchall():
            out[c].append(VectorHit(c, target_id, float(similarity)))
    return dict(out)


def hits_union(*lists: list[VectorHit], limit: int) -> list[VectorHit]:
    """The best `limit` of several lists of one collection, each document once, ordered as an exact
    search orders them (similarity, then the document's target)."""
    best: dict[int, VectorHit] = {}
    for hits in lists:
        for hit in hits:
            if hit.target_id not in best or hit.similarity > best[hit.target_id].similarity:
                best[hit.target_id] = hit
    return sorted(best.values(), key=lambda h: (-h.similarity, h.target_id))[:limit]


# The `limit` nearest of one collection through a graph: `where` repeats the graph's predicate
# (the shared per-model one, or a large scope's own).
_NEAREST = """
    SELECT d.collection, d.target_id, 1 - n.distance AS similarity
    FROM (
        SELECT e.target_type, e.target_id, e.vec::vector({dim}) <=> %s::vector({dim}) AS distance
        FROM retrieval_embedding e
        WHERE {where}
        ORDER BY e.vec::vector({dim}) <=> %s::vector({dim})
        LIMIT %s
    ) n
    CROSS JOIN LATERAL (SELECT collection, target_id, scope_id FROM retrieval_searchdocument WHERE id = n.target_id OFFSET 0) d
    WHERE d.scope_id = %s
    ORDER BY n.distance, d.target_id
"""


# pgvector's largest hnsw.ef_search.
EF_SEARCH_MAX = 1000


def _hnsw_settings(cursor, limit: int = 0) -> None:
    """The HNSW scan's settings for this transaction, in one round trip. `limit`: a search of a
    scope's own graph, whose candidate list is made as long as the rows asked for (iterative scans
    would otherwise go on past `ef_search` in steps, each a new search from the entry point)."""
    ef = min(max(int(settings.RETRIEVAL_EF_SEARCH), limit, 1), EF_SEARCH_MAX)
    cursor.execute(f"SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = {ef}")


def vector_search_exact(*, scope: Scope, embedder: Embedder) -> bool:
    """Whether the scope holds fewer than RETRIEVAL_EXACT_BELOW vectors of the model (counted on
    the scope index, stopping at the threshold), or any vector of the model outside the HNSW graph
    (deferred by an indexer that had another threshold, or not yet added after other writers grew
    the scope): the graph alone would miss those. A large scope's vectors are all outside the
    shared graph, in graphs of its own (`scope_graphs_build`): searched through those, not exactly."""
    threshold = max(int(settings.RETRIEVAL_EXACT_BELOW), 0)
    graphs = [scope_graph_name(scope_id=scope.pk, target_type=t, model=embedder.name) for t in DOC_TARGET_TYPES]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {SCOPE_VECTORS_UP_TO} < %s"
            " OR EXISTS (SELECT 1 FROM retrieval_embedding WHERE scope_id = %s AND model = %s AND deferred)"
            " AND NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = ANY(ARRAY(SELECT to_regclass(n) FROM unnest(%s::text[]) n)) AND indisvalid)",
            [scope.pk, embedder.name, threshold, threshold, scope.pk, embedder.name, graphs],
        )
        return bool(cursor.fetchone()[0])


def explain_vector_query(*, scope: Scope, query_vector: list[float], embedder: Embedder, collections: list[str], limit: int) -> str:
    """EXPLAIN of the inner nearest-neighbour query, as the benchmark prints it: the exact or the
    approximate form, whichever `vector_candidates` would run for this scope."""
    dim = int(embedder.dim)
    literal = vector_literal(query_vector)
    exact = vector_search_exact(scope=scope, embedder=embedder)
    own = set() if exact else scope_graphs(scope_id=scope.pk, model=embedder.name)
    targets = [vector_target(c) for c in collections]
    if own and len(targets) == 1 and targets[0] in own:
        where, params = scope_graph_predicate(scope_id=scope.pk, target_type=targets[0], model=embedder.name)
    else:
        where, params = "e.model = %s AND e.scope_id = %s AND e.target_type = ANY(%s)" + ("" if exact or own else " AND NOT e.deferred"), [
            embedder.name, scope.pk, targets]
    tie = ", e.target_id" if exact else ""
    with transaction.atomic(), connection.cursor() as cursor:
        _hnsw_settings(cursor, limit=limit if own else 0)
        cursor.execute(
            f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT e.target_type, e.target_id FROM retrieval_embedding e"
            f" WHERE {where} ORDER BY e.vec::vector({dim}) <=> %s::vector({dim}){tie} LIMIT %s",
            [*params, literal, limit],
        )
        return "\n".join(row[0] for row in cursor.fetchall())
