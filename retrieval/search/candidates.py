"""The candidate lists, each at most `pool` long: BM25 per collection (exact top-k, common
words selecting only where the bound needs them: retrieval/bm25_topk.py), nearest vectors per
collection (through graphs, a window list also holds the windows around the nearest turns: retrieval/vector.py,
`windows_near_turns`), the facts of the entities the question names, for "what changed" the facts that
began in the window, and while the index is behind, the un-indexed rows matched on their text.

Outside a transaction the vector searches (one per collection) and the entity look-ups run on
pool threads, each on its own connection, beside BM25 on the caller's (retrieval/concurrent.py).
"""

import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db import connection
from django.db.models import Q

from memoryweb.providers.embedders import Embedder
from memories.models import Entity, Fact, FactStatus
from retrieval.concurrent import Soon, side_by_side
from retrieval.bm25_topk import bm25_top
from retrieval.fulltext import Hit, unindexed_candidates
from retrieval.indexing import Backlog
from retrieval.models import Collection
from retrieval.intents import attributes_asked
from retrieval.matrix import matrix_collections, matrix_for
from retrieval.search.eligibility import document_filter, fact_eligible, window_postings
from retrieval.search.question import (
    Question, asks_conjecture, asks_list, entities_named, named_speaker, scope_speakers, speakers_named,
)
from retrieval.documents import WINDOW_RADII
from retrieval.vector import (
    VectorHit, hits_union, speaker_vector_candidates, vector_candidates, vector_search_exact, windows_near_turns,
)


@dataclass
class Candidates:
    bm25: dict[str, list[Hit]] = field(default_factory=dict)
    vectors: dict[str, list[VectorHit]] = field(default_factory=dict)
    entities: list[Entity] = field(default_factory=list)
    entity_facts: list[Fact] = field(default_factory=list)
    changed: list[Fact] = field(default_factory=list)
    unindexed: dict[str, list[Hit]] = field(default_factory=dict)
    # RETRIEVAL_SPEAKER_LISTS: per speaker the question names, the nearest of their own turns.
    speakers: dict[str, list[VectorHit]] = field(default_factory=dict)
    # RETRIEVAL_LEXICAL_FEEDBACK: BM25 on turns again, the query's lexemes with the first pass's.
    feedback: list[Hit] = field(default_factory=list)
    # Whether the scope's vectors were searched exactly (a small scope) rather than through graphs.
    exact: bool = False


@dataclass(frozen=True)
class QueryVectors:
    """The question's vectors: as asked, for facts, whose vectors hold their subject's name
    ("Ada: Ada lives in Paris"); and without the scope's speakers' names (`dense_query`), for
    turns, windows and episodes, whose vectors are made from what was said, without who said it
    (retrieval/documents.py: vector_text). A query is embedded as its documents were."""

    asked: list[float]
    unnamed: list[float]

    @classmethod
    def embed(cls, embedder: Embedder, *, asked: str, unnamed: str, kinds: tuple[str, ...]) -> "QueryVectors":
        """The ones the question's `kinds` search, in one model call (one text when no name was
        left out, or when only facts or only conversation are searched)."""
        texts = list(dict.fromkeys(([asked] if "fact" in kinds else []) + ([unnamed] if set(kinds) - {"fact"} else [])))
        by_text = dict(zip(texts, embedder.embed(texts)))
        return cls(by_text.get(asked) or by_text[unnamed], by_text.get(unnamed) or by_text[asked])

    def for_collection(self, collection: str) -> list[float]:
        return self.asked if collection == Collection.FACT else self.unnamed


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


def speaker_lists_for(q: Question) -> list[str]:
    """The speakers whose own turns make a list of their own (RETRIEVAL_SPEAKER_LISTS): each one
    the question names when it asks for a conjecture, or (conjectures+lists…) for several things
    (`asks_list`: "What books has Melanie read?"), or (…+pairs) names two or more, or (all) always.
    The default, conjectures+lists+pairs, held in the cross-validation (docs/ARCHITECTURE.md)."""
    occasion = settings.RETRIEVAL_SPEAKER_LISTS
    if occasion == "off":
        return []
    named = speakers_named(q.scope, q.text, q.speakers, possessive=True)
    pairs = occasion.endswith("+pairs") and len(named) > 1
    lists = "+lists" in occasion and asks_list(q.text)
    return named if occasion == "all" or asks_conjecture(q.text) or pairs or lists else []


def candidates_gather(
    q: Question, *, lexemes: list[str], query_vector: list[float] | QueryVectors | Soon | None, embedder: Embedder, collections: list[str],
    pool: int, backlog: Backlog, searchable: list[str], timings: dict, narrow_window: bool = False,
) -> Candidates:
    """Every list for `q`. `collections`: those with documents; `searchable`: every collection
    the question's kinds may use (un-indexed rows may belong to one with no document yet);
    `query_vector`: the query's vector (one for every collection), its `QueryVectors`, or their
    embedding under way (`Soon`); `narrow_window`: `q`'s window holds few documents
    (`window_documents`), so BM25 scores only theirs."""
    memo = _memo.get()
    if memo is None:
        return _gather(q, lexemes=lexemes, query_vector=query_vector, embedder=embedder, collections=collections,
                       pool=pool, backlog=backlog, searchable=searchable, timings=timings, narrow_window=narrow_window)
    key = (q.scope.pk, q.text, repr(q.window), q.as_of, q.history, q.changes, q.kinds, q.speaker_filter,
           getattr(q.speaker_entity, "pk", None), pool, tuple(collections), backlog.pending, narrow_window)
    if key not in memo:
        memo[key] = _gather(q, lexemes=lexemes, query_vector=query_vector, embedder=embedder, collections=collections,
                            pool=pool, backlog=backlog, searchable=searchable, timings=timings, narrow_window=narrow_window)
    return memo[key]


def _gather(
    q: Question, *, lexemes: list[str], query_vector: list[float] | QueryVectors | Soon | None, embedder: Embedder, collections: list[str],
    pool: int, backlog: Backlog, searchable: list[str], timings: dict, narrow_window: bool,
) -> Candidates:
    scope = q.scope
    started = time.perf_counter()
    lap: dict[str, float] = {}

    def lexical():
        t0 = time.perf_counter()
        doc_filter, params = document_filter(q) if collections else ("", [])
        hits = bm25_top(
            scope=scope, lexemes=lexemes, collections=collections, limit=pool, doc_filter=doc_filter, params=params,
            speaker=named_speaker(scope, q.text, q.speakers), posting_filter=window_postings(q) if narrow_window else ("", {}),
        ) if collections else {}
        unindexed = unindexed_candidates(scope=scope, lexemes=lexemes, collections=searchable, backlog=backlog, limit=pool)
        lap["bm25"] = time.perf_counter() - t0
        return hits, unindexed

    def semantic(group: list[str]):
        def search():
            vector = query_vector.get() if isinstance(query_vector, Soon) else query_vector
            if isinstance(vector, QueryVectors):
                vector = vector.for_collection(group[0])  # a group is facts alone, or never facts
            t0 = time.perf_counter()
            if matrix is not None and group[0] in matrix_collections():
                hits = matrix.lists(vector, collections=group, limit=min(pool, settings.RETRIEVAL_VECTOR_POOL_MAX))
            else:
                # A graph search costs what its candidate list holds (ef_search is sized to the list), and
                # in a large scope the fused list's head rarely comes from deep in a vector list.
                hits = vector_candidates(scope=scope, query_vector=vector, embedder=embedder, collections=group,
                                         limit=min(pool, settings.RETRIEVAL_VECTOR_POOL_MAX), exact=exact)
            if group == [Collection.TURN] and (windows := [c for c in collections if c in WINDOW_RADII]):
                # RETRIEVAL_WINDOWS_NEAR_TURNS: the windows around the nearest turns, beside the window graphs' own.
                turns = [hit.target_id for hit in hits.get(Collection.TURN, [])[: settings.RETRIEVAL_WINDOWS_NEAR_TURNS]]
                near.update(windows_near_turns(scope=scope, turns=turns, query_vector=vector, embedder=embedder, collections=windows))
            lap[f"vector {','.join(group)}"] = time.perf_counter() - t0
            return hits
        return search

    def spoken(speaker: str):
        """RETRIEVAL_SPEAKER_LISTS: the nearest of the turns `speaker` said. The vector lists cannot
        see who spoke, and a question about two people ("What have Jon and Gina both done?") needs
        each one's own lines; one list per speaker named, so neither crowds the other out. A
        conjecture about someone ("Would Caroline move back?") is answered from what they said of
        themselves, wherever it was said."""
        def search():
            vector = query_vector.get() if isinstance(query_vector, Soon) else query_vector
            if isinstance(vector, QueryVectors):
                vector = vector.for_collection(Collection.TURN)
            t0 = time.perf_counter()
            hits = speaker_vector_candidates(scope=scope, query_vector=vector, embedder=embedder, speaker=speaker,
                                             collection=Collection.TURN, limit=min(pool, settings.RETRIEVAL_VECTOR_POOL_MAX))
            lap[f"vector said by {speaker}"] = time.perf_counter() - t0
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

    near: dict[str, list[VectorHit]] = {}  # the windows around the nearest turns, through the graphs only
    matrix = None
    if collections:
        # Whether the scope is small enough to search exactly: asked once, not per collection.
        exact = vector_search_exact(scope=scope, embedder=embedder)
        # Exactly: one scan for the facts and one for every other collection (their query vectors
        # differ, `QueryVectors`). Through the graph: one nearest-neighbour search per collection,
        # each on its own connection.
        if exact:
            groups = [group for group in ([c for c in collections if c == Collection.FACT],
                                          [c for c in collections if c != Collection.FACT]) if group]
        else:
            # A scope's conversation held in memory (retrieval/matrix.py): its turn and window lists in one
            # exact pass on one thread, instead of a graph search each and the windows around the nearest turns.
            matrix = matrix_for(scope=scope, embedder=embedder) if set(collections) & set(matrix_collections()) else None
            held = [c for c in collections if matrix is not None and c in matrix_collections()]
            groups = ([held] if held else []) + [[collection] for collection in collections if collection not in held]
        # The speakers' own lines: exact scans, so in a small scope only (a large one's cost stays as it was).
        named = speaker_lists_for(q) if exact and Collection.TURN in collections else []
        (bm25, unindexed), (entities, entity_facts, changed), *per_collection = side_by_side(
            lexical, structured, *(semantic(group) for group in groups), *(spoken(speaker) for speaker in named)
        )
        vectors = {collection: hits for found in per_collection[: len(groups)] for collection, hits in found.items()}
        for collection, hits in near.items():
            vectors[collection] = hits_union(vectors.get(collection, []), hits, limit=min(pool, settings.RETRIEVAL_VECTOR_POOL_MAX))
        speakers = dict(zip(named, per_collection[len(groups):]))
    else:
        (bm25, unindexed), (entities, entity_facts, changed) = lexical(), structured()
        vectors, speakers = {}, {}
    # These overlap; "candidates" is what the caller waited for all of them ("vector": the slowest).
    vector_laps = [seconds for name, seconds in lap.items() if name.startswith("vector ")]
    timings.update(
        bm25=lap.get("bm25", 0.0), vector=max(vector_laps, default=0.0), entities=lap["entities"],
        candidates=time.perf_counter() - started,
    )
    return Candidates(bm25, vectors, entities, entity_facts, changed, unindexed, speakers, exact=bool(collections) and exact)


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


# Lexical feedback (RETRIEVAL_LEXICAL_FEEDBACK): the first fusion's best turns lend their words.
FEEDBACK_TURNS = 5  # the first fusion's top turns read for words
FEEDBACK_MIN_TURNS = 2  # a word lent by one turn alone is that turn's, not the topic's


def feedback_terms(*, q: Question, turn_ids: list[int], lexemes: list[str], terms: int) -> list[str]:
    """RM3-style expansion terms: the lexemes of what was said in the turns `turn_ids` (the first
    fusion's best; their text, not their documents, whose date labels every turn of a session
    shares) found in at least FEEDBACK_MIN_TURNS of them, weighted by that count times their idf in
    the scope's turns: the best `terms` that are neither the question's nor a speaker's name."""
    if not turn_ids or terms <= 0:
        return []
    speakers = q.speakers if q.speakers is not None else scope_speakers(q.scope)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT u.lexeme, count(*) * ln((c.doc_count + 1.0) / (s.df + 0.5)) AS weight
            FROM memories_turn t
            CROSS JOIN LATERAL unnest(to_tsvector('english', t.text)) u
            JOIN retrieval_termstat s ON s.scope_id = t.scope_id AND s.collection = %s AND s.lexeme = u.lexeme
            JOIN retrieval_corpusstat c ON c.scope_id = t.scope_id AND c.collection = %s
            WHERE t.scope_id = %s AND t.id = ANY(%s) AND NOT (u.lexeme = ANY(%s))
              AND NOT (u.lexeme = ANY(tsvector_to_array(to_tsvector('english', %s))))
            GROUP BY u.lexeme, c.doc_count, s.df
            HAVING count(*) >= %s
            ORDER BY weight DESC, u.lexeme
            LIMIT %s
            """,
            [Collection.TURN, Collection.TURN, q.scope.pk, list(turn_ids), list(lexemes), " ".join(speakers),
             FEEDBACK_MIN_TURNS, terms],
        )
        return [row[0] for row in cursor.fetchall()]


def feedback_gather(q: Question, found: Candidates, *, top_turns: list[int], lexemes: list[str], pool: int) -> Candidates:
    """`found` with one more list: BM25 on turns for the question's lexemes and
    RETRIEVAL_LEXICAL_FEEDBACK more from its best turns (`feedback_terms`), with the same filter
    and speaker boost as the first. Measured by cross-validation (retrieval/cv.py)."""
    terms = feedback_terms(q=q, turn_ids=top_turns[:FEEDBACK_TURNS], lexemes=lexemes, terms=settings.RETRIEVAL_LEXICAL_FEEDBACK)
    if not terms:
        return found
    doc_filter, params = document_filter(q)
    hits = bm25_top(scope=q.scope, lexemes=lexemes + terms, collections=[Collection.TURN], limit=pool, doc_filter=doc_filter,
                    params=params, speaker=named_speaker(q.scope, q.text, q.speakers))
    return replace(found, feedback=hits.get(Collection.TURN, []))
