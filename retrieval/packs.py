"""BM25 over packed postings: a large scope's frequent lexemes read as arrays, scored in numpy.

In a large scope the postings of a question's lexemes are tens of thousands of rows at 100,000
turns and a million at a million turns (speakers' names, common verbs), and PostgreSQL touches
each row at about 0.4 µs or more (docs/ARCHITECTURE.md, "A million turns in one scope"). A
`PostingPack` holds one lexeme's postings in one collection as four arrays in one row (document
ids, tf, lengths, speaker codes: 16 bytes a posting, out of line and uncompressed), so reading it
is a copy; numpy then scores every document holding any of the question's lexemes, which is the
exhaustive ranking itself (`bm25_exact`), not a bound on it: the whole list is exact, not only its
first ten.

A process keeps the packs it read last, decoded (`_PackCache`, at most RETRIEVAL_PACK_CACHE_MB): a
question sends the `built_at` of the packs it holds and gets those rows without their arrays. A
pack is written whole with a new `built_at` (the clock's, not the transaction's), so a pack held
at the row's `built_at` (and id, count and largest document) is the row.

A pack is built by the indexer (`packs_refresh`, under the scope's lock, at the end of an index
run) for each lexeme with at least PACK_MIN_DF postings in a collection of at least PACK_AT
documents, and built again when the postings added after it reach a share of it (REPACK_SHARE);
the postings of documents after the pack's `max_document` are read as rows beside it, through the
lookup index (scope, collection, lexeme, document). It is a copy, kept true three ways:
- migration 0011's triggers record every packed posting a statement deletes or updates
  (`PostingGone`: a window rewritten as its session goes on, a turn forgotten), whatever path it
  comes by; the pack's entries for those documents are not used and their current postings, if
  any, are read as rows. Packing the lexeme again clears them;
- a pack is used only when its live entries and the rows read add up to the lexeme's df as the
  term statistics say (which the indexer keeps in the same transactions as the postings);
  otherwise (a posting written below the pack's `max_document` by another path) the lexeme's rows
  are read instead;
- an erasure drops the scope's packs (`packs_drop`): they hold the erased documents' ids under
  their lexemes. Healing sees packs due and has the scope indexed, which packs it again.

The scores are the exhaustive ranking's to the last bit: each term is `w·tf / (tf + k_c + k_l·len)`
in the same floating-point steps as the SQL, and a document's terms are added in the order the
exhaustive ranking's index scan adds them (collection, then lexeme in the database's collation),
then multiplied by the speaker boost. Per collection the documents are ranked by score, ties by
document id, and the best are read in one query with the document filter (for their targets), more
of them when the filter refuses many.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import psycopg
from django.conf import settings
from django.db import connection, transaction

from memories.models import Scope
from retrieval.fulltext import Hit, _Weights
from retrieval.ranking import best_first

PACK_AT = 5000  # documents in a collection: below, its lexemes are read as rows (as the common-terms rule's size)
PACK_MIN_DF = 1000  # postings: a lexeme with fewer is read as rows (one index range, cheap)
REPACK_SHARE = 0.125  # the rows after a pack reach this share of it (and PACK_MIN_DF / 4): packed again
PACK_BATCH = 50  # lexemes packed per statement
DENSE_SPAN, DENSE_PER_POSTING = 1_000_000, 16  # ids spanning at most this (+ this per posting) are scored densely
FIRST_SEND = 1.25  # candidates read against the document filter at a time: this many times `limit`


@dataclass
class _Cell:
    ci: int  # collection index in the weights
    li: int  # lexeme index in the weights
    documents: np.ndarray  # int64
    tfs: np.ndarray  # float64
    lengths: np.ndarray  # float64
    spoken: np.ndarray  # bool: the posting's speaker is the one the question names


def bm25_packed(
    *, scope: Scope, weights: _Weights, limit: int, doc_filter: str = "", params: list | None = None, speaker: str = "",
    passes: list | None = None,
) -> dict[str, list[Hit]]:
    """The exhaustive BM25 ranking's top `limit` per collection (`bm25_exact`'s lists, scores and
    order), from the packs and the rows after them. `passes`, when given, gets what was read."""
    copies: list = []  # the packs this process held (`_PackCache`)
    cells = _cells(scope=scope, weights=weights, speaker=speaker, held=copies)
    if passes is not None:
        passes.append({"packed": sum(1 for cell in cells if cell[1]), "cells": len(cells), "held": len(copies),
                       "postings": int(sum(len(part.documents) for parts, _ in cells for part in parts))})
    count = len(weights.collections)
    cells = [part for parts, _ in cells for part in parts]  # each cell's pack, then its rows, as the exhaustive ranking adds them
    if not cells:
        return _filtered(scope=scope, weights=weights, ranked=[_Ranking(np.empty(0), np.empty(0, np.int64))] * count, limit=limit,
                         doc_filter=doc_filter, params=params)
    # Every collection's postings scored at once: a document is in one collection, so its sum is
    # the same, and at a million turns each array over the id span (the three collections' ids
    # interleave: each spans them all) is tens of MB to fill and scan, made once instead of once a collection.
    documents = np.concatenate([cell.documents for cell in cells])
    # One term per posting, in the SQL's steps: (w·tf) / ((tf + k_c) + k_l·length).
    terms = np.concatenate([
        (weights.idfs[cell.ci * len(weights.lexemes) + cell.li] * cell.tfs)
        / ((cell.tfs + weights.k_const[cell.ci]) + weights.k_length[cell.ci] * cell.lengths)
        for cell in cells
    ])
    owners = np.concatenate([np.full(len(cell.documents), cell.ci, dtype=np.int8) for cell in cells])
    # bincount adds each document's terms in array order, the lexemes' order within its collection
    # (the cells come by collection, then lexeme): over the id span when the ids are near together
    # (a score of 0 is a document holding none: every term is above 0), else over their ranks.
    low, span = int(documents.min()), int(documents.max() - documents.min()) + 1
    dense = span <= DENSE_PER_POSTING * len(documents) + DENSE_SPAN
    if dense:
        index = documents - low
        scores = np.bincount(index, weights=terms, minlength=span)
    else:
        unique, index = np.unique(documents, return_inverse=True)
        scores = np.bincount(index, weights=terms, minlength=len(unique))
    if speaker:
        boosted = np.zeros(len(scores), dtype=bool)
        boosted[index[np.concatenate([cell.spoken for cell in cells])]] = True
        scores[boosted] = scores[boosted] * (1 + settings.RETRIEVAL_SPEAKER_BOOST)
    owner = np.empty(len(scores), dtype=np.int8)  # each document's collection (read only where a posting wrote it)
    owner[index] = owners
    if dense:
        # Every term is above 0, so a score above 0 is a document holding a lexeme: numpy finds those
        # in a mask of booleans several times faster than among the floats themselves.
        holding = np.flatnonzero(scores > 0)
        of = owner[holding]
        ranked = [_Ranking(scores, low=low, held=holding[of == ci]) for ci in range(count)]
    else:
        ranked = [_Ranking(scores[owner == ci], unique[owner == ci]) for ci in range(count)]
    return _filtered(scope=scope, weights=weights, ranked=ranked, limit=limit, doc_filter=doc_filter, params=params)


class _Ranking:
    """A collection's scores: dense over a span of document ids (`documents` None: the document
    `low` + i, 0 where none of the lexemes is; the span may hold other collections' documents,
    `held` says which places are this collection's), or one per document of `documents`."""

    def __init__(self, scores: np.ndarray, documents: np.ndarray | None = None, low: int = 0, held: np.ndarray | None = None):
        # held: over a span, the places of the collection's documents holding a lexeme (found once:
        # `best` may be asked again for more when the document filter refuses many).
        self.scores, self.documents, self.low, self.held = scores, documents, low, held
        self.size = len(self.held) if documents is None else len(documents)

    def best(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The first `n` documents by score, ties by document id, best first (a full sort's first `n`)."""
        n = min(n, self.size)
        if n <= 0:
            return np.empty(0, np.int64), np.empty(0)
        if self.documents is None:
            # Over an id span (every document of the scope, of every collection): mostly zeros, so
            # the documents holding a lexeme are taken out first and the selection runs on them.
            documents, scores = self.held + self.low, self.scores[self.held]
        else:
            documents, scores = self.documents, self.scores
        order = best_first(scores, documents, n)
        return documents[order], scores[order]


@dataclass(frozen=True)
class _Packed:
    """A pack's arrays as numpy reads them (documents, tf and lengths as scored, speaker codes), and
    the pack row they were read from: its id, `built_at`, postings and largest document. A pack is
    written whole (PACK_SQL), with a new `built_at` each time, so the same four are the same arrays."""

    version: tuple[int, datetime, int, int]
    documents: np.ndarray  # int64
    tfs: np.ndarray  # float64
    lengths: np.ndarray  # float64
    codes: np.ndarray  # int32

    @property
    def nbytes(self) -> int:
        return self.documents.nbytes + self.tfs.nbytes + self.lengths.nbytes + self.codes.nbytes


class _PackCache:
    """The packs this process read last, decoded, least recently used first out, at most
    RETRIEVAL_PACK_CACHE_MB in all: a question whose lexemes were asked about before reads their
    packs' versions, not their arrays (at a million turns a frequent lexeme's pack is 16 MB and more).
    Keyed by (scope, collection, lexeme); an entry is used only when its version is the row's."""

    def __init__(self):
        self._entries: OrderedDict[tuple[int, str, str], _Packed] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # requests on several threads of one process share it

    def get(self, key: tuple[int, str, str]) -> _Packed | None:
        with self._lock:
            packed = self._entries.get(key)
            if packed is not None:
                self._entries.move_to_end(key)
            return packed

    def put(self, key: tuple[int, str, str], packed: _Packed) -> None:
        budget = settings.RETRIEVAL_PACK_CACHE_MB * 2**20
        with self._lock:
            self._drop(key)
            if packed.nbytes > budget:
                return
            for array in (packed.documents, packed.tfs, packed.lengths, packed.codes):
                array.flags.writeable = False  # shared by every question that reads the pack
            self._entries[key] = packed
            self._bytes += packed.nbytes
            while self._bytes > budget:
                self._drop(next(iter(self._entries)))

    def discard(self, key: tuple[int, str, str]) -> None:
        with self._lock:
            self._drop(key)

    def clear(self, scope: int | None = None) -> None:
        """Forget every pack held, or the packs of one scope."""
        with self._lock:
            for key in [key for key in self._entries if scope is None or key[0] == scope]:
                self._drop(key)

    def _drop(self, key: tuple[int, str, str]) -> None:
        packed = self._entries.pop(key, None)
        if packed is not None:
            self._bytes -= packed.nbytes


_cache = _PackCache()


def _cells(*, scope: Scope, weights: _Weights, speaker: str, held: list | None = None) -> list[tuple[list[_Cell], bool]]:
    """Each (collection, lexeme) of the question with postings, in parts: its pack and the rows after it, or
    its rows alone (no pack, or a pack that does not add up to the df); with whether a pack was
    used. In the exhaustive ranking's order of terms: by collection, then lexeme, as the database sorts.
    A pack this process holds (`_PackCache`) at the row's `built_at` comes without its arrays (its
    key is added to `held`, when given)."""
    count = len(weights.lexemes)
    wanted = [(ci, li) for ci in range(len(weights.collections)) for li in range(count) if weights.dfs[ci * count + li] > 0]
    sql = """
        SELECT q.ci, q.li, k.id, k.built_at, k.postings, k.max_document,
               CASE WHEN k.built_at = q.held THEN NULL ELSE k.documents END,
               CASE WHEN k.built_at = q.held THEN NULL ELSE k.tfs END,
               CASE WHEN k.built_at = q.held THEN NULL ELSE k.lengths END,
               CASE WHEN k.built_at = q.held THEN NULL ELSE k.speaker_codes END,
               k.speakers, k.gone, r.n, r.documents, r.tfs, r.lengths, r.spoken
        FROM unnest(%(ci)s::int[], %(li)s::int[], %(collection)s::text[], %(lexeme)s::text[], %(held)s::timestamptz[])
             AS q(ci, li, collection, lexeme, held)
        LEFT JOIN LATERAL (
            SELECT k.*, coalesce((
                SELECT array_agg(g.document_id) FROM retrieval_postinggone g
                WHERE g.scope_id = k.scope_id AND g.collection = k.collection AND g.lexeme = k.lexeme
            ), '{}') AS gone
            FROM retrieval_postingpack k
            WHERE k.scope_id = %(scope)s AND k.collection = q.collection AND k.lexeme = q.lexeme AND NOT %(rows_only)s
        ) k ON true
        CROSS JOIN LATERAL (
            SELECT count(*) AS n, string_agg(int8send(p.document_id), ''::bytea) AS documents,
                   string_agg(int2send(p.tf::int2), ''::bytea) AS tfs, string_agg(int4send(p.length), ''::bytea) AS lengths,
                   string_agg(boolsend(p.speaker = %(speaker)s), ''::bytea) AS spoken
            FROM (
                SELECT p.document_id, p.tf, p.length, p.speaker FROM retrieval_posting p
                WHERE p.scope_id = %(scope)s AND p.collection = q.collection AND p.lexeme = q.lexeme
                  AND p.document_id > coalesce(k.max_document, -1)
                UNION ALL
                SELECT p.document_id, p.tf, p.length, p.speaker FROM retrieval_posting p
                WHERE p.scope_id = %(scope)s AND p.collection = q.collection AND p.lexeme = q.lexeme
                  AND p.document_id = ANY(k.gone)
            ) p
        ) r
        ORDER BY q.collection, q.lexeme
    """

    def key(ci: int, li: int) -> tuple[int, str, str]:
        return scope.pk, weights.collections[ci], weights.lexemes[li]

    def read(cells: list[tuple[int, int]], rows_only: bool) -> list:
        versions = [None if rows_only or (packed := _cache.get(key(ci, li))) is None else packed.version[1] for ci, li in cells]
        with _server_cursor() as cursor:  # in binary the arrays arrive as stored (in text, bytea comes as hex)
            cursor.execute(sql, binary=True, params={
                "scope": scope.pk, "speaker": speaker, "rows_only": rows_only, "held": versions,
                "ci": [ci for ci, _ in cells], "li": [li for _, li in cells],
                "collection": [weights.collections[ci] for ci, _ in cells], "lexeme": [weights.lexemes[li] for _, li in cells],
            })
            return cursor.fetchall()

    out: dict[tuple[int, int], tuple[list[_Cell], bool]] = {}
    stale = []
    rows = read(wanted, rows_only=False)
    order = [(row[0], row[1]) for row in rows]
    for (ci, li, pack_id, built_at, packed, max_document, p_docs, p_tfs, p_lengths, p_codes, p_speakers, gone,
         n, r_docs, r_tfs, r_lengths, r_spoken) in rows:
        parts = [_rows(ci, li, r_docs, r_tfs, r_lengths, r_spoken)]
        if packed is not None:
            pack = _pack(key(ci, li), (pack_id, built_at, packed, max_document), p_docs, p_tfs, p_lengths, p_codes)
            if pack is None:
                stale.append((ci, li))  # held at that build time, but not this very pack: read the rows
                continue
            if p_docs is None and held is not None:
                held.append(key(ci, li))
            code = p_speakers.index(speaker) + 1 if speaker and speaker in p_speakers else -1
            cell = _Cell(ci, li, pack.documents, pack.tfs, pack.lengths, pack.codes == code)
            if gone:  # entries whose postings were deleted or rewritten since: their rows are read instead
                live = ~np.isin(cell.documents, np.asarray(gone, dtype=np.int64))
                cell = _Cell(ci, li, cell.documents[live], cell.tfs[live], cell.lengths[live], cell.spoken[live])
            if len(cell.documents) + n != weights.dfs[ci * count + li]:
                stale.append((ci, li))  # a posting written below the pack by another path: read the rows
                continue
            parts.insert(0, cell)
        else:
            _cache.discard(key(ci, li))  # dropped (an erasure) or never built: nothing of it kept here
        out[(ci, li)] = (parts, packed is not None)  # not joined here: the caller joins every cell's parts at once
    if stale:
        for ci, li, *_, r_docs, r_tfs, r_lengths, r_spoken in read(stale, rows_only=True):
            out[(ci, li)] = ([_rows(ci, li, r_docs, r_tfs, r_lengths, r_spoken)], False)
    return [out[cell] for cell in order]


def _pack(key: tuple[int, str, str], version: tuple, documents, tfs, lengths, codes) -> _Packed | None:
    """The pack row's arrays: decoded from the bytes read, or this process's copy when they were not
    sent (the row's `built_at` is the copy's); None when the copy is not of this very row."""
    if documents is None:
        held = _cache.get(key)
        return held if held is not None and held.version == version else None
    cell = _arrays(0, 0, documents, tfs, lengths, np.frombuffer(codes, ">i4").astype(np.int32))
    packed = _Packed(version, cell.documents, cell.tfs, cell.lengths, cell.spoken)  # `spoken` holds the codes here
    _cache.put(key, packed)
    return packed


def _rows(ci: int, li: int, documents, tfs, lengths, spoken) -> _Cell:
    """Rows aggregated in SQL (None when there were none): `spoken` one byte a posting."""
    return _arrays(ci, li, documents, tfs, lengths, np.frombuffer(spoken or b"", np.uint8).astype(bool))


def _arrays(ci: int, li: int, documents, tfs, lengths, spoken: np.ndarray) -> _Cell:
    """A cell from the stored byte arrays (network order: int8 documents, int2 tf, int4 lengths)."""
    return _Cell(
        ci, li, np.frombuffer(documents or b"", ">i8").astype(np.int64), np.frombuffer(tfs or b"", ">i2").astype(np.float64),
        np.frombuffer(lengths or b"", ">i4").astype(np.float64), spoken,
    )


def _filtered(
    *, scope: Scope, weights: _Weights, ranked: list["_Ranking"], limit: int, doc_filter: str, params: list | None,
) -> dict[str, list[Hit]]:
    """Per collection the first `limit` of its ranking that pass `doc_filter` (a condition on
    `retrieval_searchdocument`), best first: the documents read in one query, FIRST_SEND × `limit`
    of each ranking first, then the next as many for a collection the filter left short."""
    chunk = max(1, int(limit * FIRST_SEND))
    best = [ranking.best(chunk) for ranking in ranked]
    out: dict[str, list[Hit]] = {}
    sent = [0] * len(ranked)
    send = [chunk] * len(ranked)
    while True:
        parts = []  # (collection index, documents, scores) sent in this read, in rank order
        for ci, ranking in enumerate(ranked):
            if not send[ci]:
                continue
            if sent[ci] + send[ci] > len(best[ci][0]) and len(best[ci][0]) < ranking.size:
                best[ci] = ranking.best(sent[ci] + send[ci])  # the filter refused many: more of the ranking
            part = slice(sent[ci], sent[ci] + send[ci])
            parts.append((ci, best[ci][0][part], best[ci][1][part]))
            sent[ci] = min(sent[ci] + send[ci], ranking.size)
        if not parts:
            return out
        # The documents go as one text of ids in id order (as a list, each would be dumped one by one;
        # in order, one index scan walks them, against a descent per id in rank order), and come back
        # with their targets; the scores stay here. A document is in one collection: no id twice.
        ids = np.concatenate([documents for _, documents, _ in parts])
        order = np.argsort(ids)
        named = {f"p{index}": value for index, value in enumerate(params or [])}
        named["s_documents"] = ",".join(map(str, ids[order].tolist()))
        named["s_scope"] = scope.pk  # the ids come from the scope's postings; the scope is said anyway
        with _server_cursor() as cursor:
            cursor.execute(
                "SELECT retrieval_searchdocument.id, retrieval_searchdocument.target_id FROM retrieval_searchdocument"
                " WHERE retrieval_searchdocument.id = ANY(string_to_array(%(s_documents)s, ',')::bigint[])"
                f" AND retrieval_searchdocument.scope_id = %(s_scope)s {doc_filter}",
                named,
            )
            passed = np.asarray(cursor.fetchall(), dtype=np.int64).reshape(-1, 2)
        places = np.cumsum([0] + [len(documents) for _, documents, _ in parts])
        # Each passing document's place in what was sent, in rank order within each part.
        at = order[np.searchsorted(ids[order], passed[:, 0])]
        rank = np.argsort(at)
        at, targets = at[rank], passed[rank, 1]
        which = np.searchsorted(places, at, side="right") - 1
        for part, (ci, _, scores) in enumerate(parts):
            mine = which == part
            if not mine.any():
                continue
            collection = weights.collections[ci]
            hits = out.setdefault(collection, [])
            picked = (at[mine] - places[part])[: limit - len(hits)]
            hits.extend(Hit(collection, target, score) for target, score in zip(targets[mine][: len(picked)].tolist(), scores[picked].tolist()))
        send = [0 if len(out.get(weights.collections[ci], [])) >= limit or sent[ci] >= ranking.size else chunk
                for ci, ranking in enumerate(ranked)]


def _server_cursor() -> psycopg.Cursor:
    """A cursor on Django's connection that binds parameters on the server (Django's own bind on
    the client: every value of a list is quoted in Python, and results cannot come in binary)."""
    connection.ensure_connection()
    return psycopg.Cursor(connection.connection)


def _due(*, scope: Scope, limit: int | None = None) -> list[tuple[str, str]]:
    """The (collection, lexeme) of the scope's large collections that are due to be packed: at
    least PACK_MIN_DF postings and no pack, or the rows after their pack and its entries gone
    reaching REPACK_SHARE of it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT EXISTS (SELECT 1 FROM retrieval_corpusstat WHERE scope_id = %s AND doc_count >= %s)", [scope.pk, PACK_AT])
        if not cursor.fetchone()[0]:
            return []  # a small scope: nothing to pack
        cursor.execute(
            "SELECT t.collection, t.lexeme FROM retrieval_termstat t"
            " JOIN retrieval_corpusstat c ON c.scope_id = t.scope_id AND c.collection = t.collection AND c.doc_count >= %s"
            " LEFT JOIN retrieval_postingpack k ON k.scope_id = t.scope_id AND k.collection = t.collection AND k.lexeme = t.lexeme"
            " LEFT JOIN (SELECT collection, lexeme, count(*) AS n FROM retrieval_postinggone WHERE scope_id = %s"
            "            GROUP BY collection, lexeme) g ON g.collection = t.collection AND g.lexeme = t.lexeme"
            " WHERE t.scope_id = %s AND t.df >= %s"
            "   AND (k.id IS NULL OR abs(t.df - k.postings) + coalesce(g.n, 0) >= greatest(%s * k.postings, %s / 4))"
            " ORDER BY t.collection, t.lexeme LIMIT %s",
            [PACK_AT, scope.pk, scope.pk, PACK_MIN_DF, REPACK_SHARE, PACK_MIN_DF, limit],
        )
        return cursor.fetchall()


def packs_due(*, scope: Scope) -> bool:
    """Whether some lexeme of the scope is due to be packed (healing: packs deleted by a forgetting
    or an erasure in a scope nobody has written to since)."""
    return bool(_due(scope=scope, limit=1))


def packs_refresh(*, scope: Scope, progress: Callable | None = None) -> int:
    """Pack (again) the lexemes that are due (`_due`). Hold the scope's indexing lock. Returns how
    many packs were written."""
    due = _due(scope=scope)
    for start in range(0, len(due), PACK_BATCH):
        if progress:
            progress(start, len(due), stage="packs")
        part = due[start:start + PACK_BATCH]
        cells = [[c for c, _ in part], [lexeme for _, lexeme in part]]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(PACK_SQL, [*cells, scope.pk])
            cursor.execute(
                "DELETE FROM retrieval_postinggone g USING unnest(%s::text[], %s::text[]) AS q(collection, lexeme)"
                " WHERE g.scope_id = %s AND g.collection = q.collection AND g.lexeme = q.lexeme",
                [*cells, scope.pk],
            )
    if progress and due:
        progress(len(due), len(due), stage="packs")
    return len(due)


def packs_drop(*, scope: Scope) -> None:
    """Delete the scope's packs and what was recorded gone from them (an erasure: a pack holds
    erased documents' ids and lengths under their lexemes until it is built again). Healing, or
    the next index run, packs the scope again."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM retrieval_postingpack WHERE scope_id = %s", [scope.pk])
        cursor.execute("DELETE FROM retrieval_postinggone WHERE scope_id = %s", [scope.pk])
    _cache.clear(scope.pk)  # this process's copies too (other processes drop theirs when they next ask, or as they age out)


# A lexeme's postings, with its speakers numbered in their sorted order (the codes' array).
PACK_SQL = """
    INSERT INTO retrieval_postingpack
        (scope_id, collection, lexeme, postings, max_document, documents, tfs, lengths, speaker_codes, speakers, built_at)
    SELECT p.scope_id, p.collection, p.lexeme, count(*), max(p.document_id),
           string_agg(int8send(p.document_id), ''::bytea), string_agg(int2send(p.tf::int2), ''::bytea),
           string_agg(int4send(p.length), ''::bytea), string_agg(int4send(p.code::int4), ''::bytea),
           array_agg(DISTINCT p.speaker ORDER BY p.speaker), clock_timestamp()
    FROM (
        SELECT p.scope_id, p.collection, p.lexeme, p.document_id, p.tf, p.length, p.speaker,
               dense_rank() OVER (PARTITION BY p.collection, p.lexeme ORDER BY p.speaker) AS code
        FROM unnest(%s::text[], %s::text[]) AS q(collection, lexeme)
        JOIN retrieval_posting p ON p.scope_id = %s AND p.collection = q.collection AND p.lexeme = q.lexeme
    ) p
    GROUP BY p.scope_id, p.collection, p.lexeme
    ON CONFLICT (scope_id, collection, lexeme) DO UPDATE SET
        postings = EXCLUDED.postings, max_document = EXCLUDED.max_document, documents = EXCLUDED.documents,
        tfs = EXCLUDED.tfs, lengths = EXCLUDED.lengths, speaker_codes = EXCLUDED.speaker_codes,
        speakers = EXCLUDED.speakers, built_at = EXCLUDED.built_at
"""
