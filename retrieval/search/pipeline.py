"""recall and recall_evidence: the stages in order (see the package's docstring)."""

import time
from dataclasses import replace
from datetime import date, datetime

from django.conf import settings

from memoryweb.errors import InvalidInput
from memoryweb.providers.embedders import Embedder
from memories.models import Scope
from retrieval.concurrent import Soon, searching, soon
from retrieval.documents import WINDOW_RADII
from retrieval.embedder import scope_embedder
from retrieval.fulltext import query_lexemes
from retrieval.indexing import Backlog, index_catch_up
from retrieval.models import Collection, CorpusStat, IndexState
from retrieval.ranking import pool_size
from retrieval.rerank import head_reranked, shipped_model
from retrieval.search.candidates import QueryVectors, candidates_gather, feedback_gather
from retrieval.search.eligibility import WINDOW_PREFILTER_MAX, window_documents
from retrieval.search.fusion import candidates_fuse, item_lanes, lanes_score, sessions_spread
from retrieval.search.hydration import items_hydrate, replies_follow
from retrieval.search.question import Question, collections_for, dense_query, dense_text, kinds_asked, question_read
from retrieval.search.results import RecallItem, RecallResult


def recall(
    *, scope: Scope, query: str, k: int = 10, filters: dict | None = None, as_of: date | datetime | None = None,
    include_history: bool = False, now: datetime | None = None, speaker: str = "", query_vector: list[float] | None = None,
) -> RecallResult:
    """The k memories (facts and episodes) that best answer `query` in `scope`.

    filters: {"kinds": ["fact", "episode", "turn"], "speaker": NAME, "since": DATE, "until": DATE}.
    `speaker` is who asks ("I"/"my" means them). `query_vector` skips embedding the query (the
    caller embedded it already: embed `dense_query` of the question to rank as recall does)."""
    return _search(
        scope=scope, query=query, k=k, filters=filters, as_of=as_of, include_history=include_history, now=now,
        speaker=speaker, query_vector=query_vector, evidence=False,
    )


def recall_evidence(
    *, scope: Scope, query: str, k: int = 10, filters: dict | None = None, as_of: date | datetime | None = None,
    include_history: bool = False, now: datetime | None = None, speaker: str = "", query_vector: list[float] | None = None,
) -> RecallResult:
    """Like `recall`, but raw turns stay turns (with their session and turn ids): facts and
    episodes fused with the conversation's own words, the evidence an answer can quote."""
    return _search(
        scope=scope, query=query, k=k, filters=filters, as_of=as_of, include_history=include_history, now=now,
        speaker=speaker, query_vector=query_vector, evidence=True,
    )


def _search(**kwargs) -> RecallResult:
    with searching():  # counted, so a busy process runs each search's parts in turn (retrieval/concurrent.py)
        return _searched(**kwargs)


def _searched(
    *, scope: Scope, query: str, k: int, filters: dict | None, as_of, include_history: bool, now: datetime | None,
    speaker: str, query_vector: list[float] | None, evidence: bool,
) -> RecallResult:
    started = time.perf_counter()
    if not isinstance(k, int) or k < 1 or k > 200:
        raise InvalidInput("k must be a whole number from 1 to 200.")
    # The model starts on the query at once, with the scope's model and speakers as this process
    # last read them; the read below confirms them (else it starts again with the real ones).
    early = _embedding_start(scope=scope, query=query, filters=filters) if query_vector is None else None
    # The scope's index state in one read: its model, watermarks and speakers.
    state = IndexState.objects.filter(scope=scope).values_list("fact_mark", "episode_mark", "turn_mark", "model", "speakers").first()
    q = question_read(scope=scope, query=query, filters=filters, as_of=as_of, include_history=include_history, now=now, speaker=speaker,
                      speakers=tuple(state[4]) if state else ())
    _last_read[scope.pk] = (state[3], tuple(state[4])) if state else ("", ())
    # The model the scope's vectors are on, not blindly EMBEDDER (a reindex may be under way).
    embedder = scope_embedder(scope, model=state[3] if state else "")
    # The model works on the query while the index is checked and the lexical search runs; the
    # vector searches wait for it.
    dense = dense_query(q)
    vector = None
    if query_vector is None:
        if early is not None and early[0] == (embedder.name, q.text, dense, q.kinds):
            vector = early[1]
        else:
            vector = soon(lambda: QueryVectors.embed(embedder, asked=q.text, unnamed=dense, kinds=q.kinds))
    t0 = time.perf_counter()
    backlog = index_catch_up(scope=scope, embedder=embedder, marks=state[:4] if state else None)
    if backlog.caught_up:
        q = replace(q, speakers=None)  # the catch-up may have added a speaker: named_speaker reads them again
    timings = {"index": time.perf_counter() - t0}

    searchable = collections_for(q.kinds)
    sizes = dict(CorpusStat.objects.filter(scope=scope, collection__in=searchable).values_list("collection", "doc_count"))
    pool = pool_size(sum(n for c, n in sizes.items() if c not in (Collection.TURN_W1, Collection.TURN_W2)))
    collections = [c for c in searchable if sizes.get(c) and WINDOW_RADII.get(c, 0) <= settings.RETRIEVAL_WINDOW_RADIUS]
    lexemes = query_lexemes(q.text)

    def rank(question: Question, laps: dict, narrow: bool = False) -> tuple[list[RecallItem], list[str]]:
        return _rank(question, lexemes=lexemes, query_vector=vector or query_vector, embedder=embedder, collections=collections,
                     searchable=searchable, pool=pool, k=k, evidence=evidence, backlog=backlog, timings=laps, narrow_window=narrow)

    # A time window's documents are counted first (up to WINDOW_PREFILTER_MAX). One that holds
    # none is not searched (nothing in it could be found; un-indexed rows could be, so not while
    # the index is behind): its results all come from outside it, as below. One that holds few
    # is searched by its documents (BM25 scores only their postings).
    # (A window that narrows only the facts, `Question.moment_window`, is not counted: the turns
    # and episodes all pass it.)
    held = window_documents(q, collections) if q.moment_window is not None and collections and not backlog.pending else None
    empty = held == 0
    out, entity_names = rank(q, timings, narrow=held is not None and held < WINDOW_PREFILTER_MAX) if not empty else ([], [])
    if q.window is not None and len(out) < k:
        # The window holds fewer than k results: the rest come from outside it, after them and
        # marked, rather than leave the caller with nothing (a question's "last year" may mean
        # the year before the conversation, not before now).
        more, names = rank(replace(q, window=None, changes=False), timings if empty else {})
        if empty:
            entity_names = names  # the only search made
        seen = {(i.kind, i.pk) for i in out}
        floor = min((i.score for i in out), default=0.0)
        for item in more:
            if (item.kind, item.pk) in seen:
                continue
            item.why.append(f"outside the time window ({q.window.phrase})")
            item.score = min(item.score, floor)
            out.append(item)
            if len(out) >= k:
                break
    timings["total"] = time.perf_counter() - started
    if vector is not None and collections:
        # "embed": the model's time on the query; "embed_wait": how much of it the searches
        # waited for (the rest ran beside the lexical search).
        timings["embed"], timings["embed_wait"] = vector.took, vector.waited
    timings["total_without_embedding"] = timings["total"] - timings.get("embed_wait", 0.0)
    return RecallResult(
        query=q.text, items=out[:k], window=q.window, as_of=q.as_of, include_history=q.history, entities=entity_names,
        lexemes=lexemes, pool=pool, timings=timings, pending=backlog.pending,
    )


# Per scope, the model and speakers this process's last recall read (`_embedding_start`).
_last_read: dict[int, tuple[str, tuple[str, ...]]] = {}


def _embedding_start(*, scope: Scope, query: str, filters: dict | None) -> tuple[tuple, Soon] | None:
    """The query's embedding started before the scope's index state is read, from what the last
    recall of the scope in this process read (its model and speakers), with what it was started
    for: (embedder name, text, text without the speakers' names, kinds). None for a scope not
    asked about yet here, or a question the checks below will refuse."""
    seen = _last_read.get(scope.pk)
    text = (query or "").strip() if isinstance(query, str) else ""
    if seen is None or not text:
        return None
    try:
        kinds = kinds_asked(dict(filters or {}))
    except (InvalidInput, TypeError, ValueError):
        return None  # question_read refuses it, saying why
    embedder = scope_embedder(scope, model=seen[0])
    dense = dense_text(text=text, speakers=seen[1])
    work = soon(lambda: QueryVectors.embed(embedder, asked=text, unnamed=dense, kinds=kinds))
    return (embedder.name, text, dense, kinds), work


def _rank(
    q: Question, *, lexemes: list[str], query_vector: list[float] | QueryVectors | Soon | None, embedder: Embedder, collections: list[str],
    searchable: list[str], pool: int, k: int, evidence: bool, backlog: Backlog, timings: dict, narrow_window: bool = False,
) -> tuple[list[RecallItem], list[str]]:
    """Candidate lists → fused → the eligible rows of the head → lane scores, best first."""
    found = candidates_gather(q, lexemes=lexemes, query_vector=query_vector, embedder=embedder, collections=collections,
                              pool=pool, backlog=backlog, searchable=searchable, timings=timings, narrow_window=narrow_window)
    t0 = time.perf_counter()
    fused = candidates_fuse(found, q=q, pool=pool, evidence=evidence)
    if settings.RETRIEVAL_LEXICAL_FEEDBACK and evidence and Collection.TURN in collections:
        # A second pass: the first fusion's best turns lend their words to one more BM25 list.
        found = feedback_gather(q, found, top_turns=[pk for kind, pk in fused.ranked if kind == "turn"], lexemes=lexemes, pool=pool)
        if found.feedback:
            fused = candidates_fuse(found, q=q, pool=pool, evidence=evidence)
    # Only the head of the fused list is loaded and scored on the lanes (importance and recency
    # reorder it, they do not pull items from far below); more is loaded when filters thin it out.
    head = max(3 * k, 30)
    items: dict = {}
    for start in range(0, len(fused.ranked), head):
        items.update(items_hydrate(q, fused.ranked[start : start + head]))
        if len(items) >= head:
            break
    out = lanes_score(items, fused, q=q)
    if settings.RETRIEVAL_REPLY_FOLLOWS:
        # A reply loaded here was not in the head: no similarity of its own, its question's score.
        out = replies_follow(q, out, depth=settings.RETRIEVAL_REPLY_FOLLOWS, lanes=lambda item: item_lanes(item, similarity=0.0, q=q))
    if settings.RETRIEVAL_LIST_SESSION_CAP:
        out = sessions_spread(q, out, cap=settings.RETRIEVAL_LIST_SESSION_CAP, depth=k)
    if settings.RETRIEVAL_RERANK and evidence and found.exact:
        # The head's turns in a learned order (retrieval/rerank.py), in a small scope as the model was fitted.
        out = head_reranked(out, found, question=q.text, model=shipped_model())
    timings["rest"] = time.perf_counter() - t0
    return out, [e.name for e in found.entities]
