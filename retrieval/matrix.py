"""A large scope's conversation vectors held in memory: its turns' exactly, its windows' composed from them.

A scope searched through graphs (retrieval/vector.py) asks three graph searches for the conversation, one for
the turns and one for each window collection (±1, ±2), plus the windows around the nearest turns; on the
2-core machine they are most of a recall's work at 100,000 turns, and the window graphs miss some of the
exact windows (docs/ARCHITECTURE.md, "A scope's conversation held in memory"). A window's vector is the
normalised mean of its member turns' (RETRIEVAL_WINDOW_VECTORS = composed, retrieval/indexing.py:
`window_vectors`), so with every turn's similarity to the question at hand a window's is the sum of its
members' times the inverse of the length of their vectors' sum, which depends on the turns alone. One
matrix product over the scope's turn vectors then gives all three lists exactly.

The matrix is held per process, per (scope, model), up to RETRIEVAL_MATRIX_MB in all (least recently used
out first); 0 turns it off. It is built in the background from the scope's stored turn vectors (one
snapshot), and used only while it is the scope's latest: every write, update or delete of a scope's turn
vectors adds a row to `retrieval_vectorchange` (a statement trigger, memories migration 0016), and the
matrix remembers the (count, largest id) of those rows it was built at. A recall whose scope has changed
since, or has no matrix yet, searches the graphs as before and asks for a new one. An erased or forgotten
turn's vector is therefore never scored from memory after its delete commits.
"""

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from memoryweb.providers.embedders import Embedder
from memories.models import Scope
from retrieval.documents import WINDOW_RADII
from retrieval.models import Collection
from retrieval.ranking import best_first

log = logging.getLogger(__name__)

# Rows read, parsed and composed at a time when a matrix is built.
READ_ROWS = 20_000


def matrix_collections() -> tuple[str, ...]:
    """The collections a matrix answers: the turns, and the windows while their vectors are composed from
    the turns' (RETRIEVAL_WINDOW_VECTORS); windows embedded from their own text keep their graphs."""
    return (Collection.TURN, *WINDOW_RADII) if settings.RETRIEVAL_WINDOW_VECTORS == "composed" else (Collection.TURN,)


@dataclass(frozen=True)
class TurnMatrix:
    """One scope's turn vectors in session order, with what composing its windows needs."""

    token: tuple[int, int]  # the scope's vector changes it was built at: (count, largest id)
    turn_ids: np.ndarray  # int64, in (session, position) order
    vectors: np.ndarray  # float32, one row per turn, as stored (a model's vectors need not be of unit length)
    same_session: dict[int, np.ndarray]  # offset d → 1.0 where rows i and i + d are turns of one session
    # Per collection, per centre: 1 / the length of the turn's vector (turns), of the sum of its members' (windows)
    inverse_norms: dict[str, np.ndarray]

    @property
    def nbytes(self) -> int:
        return (self.turn_ids.nbytes + self.vectors.nbytes + sum(m.nbytes for m in self.same_session.values())
                + sum(n.nbytes for n in self.inverse_norms.values()))

    def _window_sums(self, rows: np.ndarray, radius: int) -> np.ndarray:
        """Per centre, the sum over the window's members (the centre and up to `radius` turns each side in
        its session, by order) of `rows` (a score per turn, or a vector per turn)."""
        return _window_sums(rows, self.same_session, radius)

    def lists(self, query_vector: list[float], *, collections: list[str], limit: int) -> dict[str, list]:
        """The `limit` nearest of each of `collections` (`matrix_collections`), best first, ordered as an exact
        search orders them (similarity, then the document's target)."""
        from retrieval.vector import VectorHit

        query = np.asarray(query_vector, dtype=np.float32)
        length = float(np.linalg.norm(query))
        query = query / length if length > 0 else query
        # On one core by default (numpy's own loop, not BLAS's threads): the product reads the whole matrix, so memory
        # bandwidth bounds it, and a second BLAS thread halves its time but takes the core the database needs for the
        # question's BM25 at the same moment (docs/ARCHITECTURE.md, "One core for the product").
        scores = self.vectors @ query if settings.RETRIEVAL_MATRIX_BLAS else np.vecdot(self.vectors, query)
        out = {}
        for collection in collections:
            # Cosines, as the database's `<=>` gives them: a window's vector is the normalised sum of its turns'.
            sums = scores if collection == Collection.TURN else self._window_sums(scores, WINDOW_RADII[collection])
            similarity = sums * self.inverse_norms[collection]
            n = min(limit, len(similarity))
            if n <= 0:
                continue
            best = best_first(similarity, self.turn_ids, n)  # ties by id, as the exact search orders them
            out[collection] = [VectorHit(collection, target, score)
                               for target, score in zip(self.turn_ids[best].tolist(), similarity[best].tolist())]
        return out


def _window_sums(rows: np.ndarray, same_session: dict[int, np.ndarray], radius: int) -> np.ndarray:
    """`TurnMatrix._window_sums` for any run of consecutive rows, given that run's `same_session` masks."""
    total = rows.copy()
    for d in range(1, radius + 1):
        mask = same_session[d] if rows.ndim == 1 else same_session[d][:, None]
        total[d:] += rows[:-d] * mask
        total[:-d] += rows[d:] * mask
    return total


def _inverse_window_norms(vectors: np.ndarray, same_session: dict[int, np.ndarray], radius: int) -> np.ndarray:
    """Per centre, 1 / the length of the sum of its window's member vectors (0 where that sum is 0), computed
    a block of rows at a time so that a million turns need no second copy of their vectors."""
    n = len(vectors)
    norms = np.empty(n, dtype=np.float32)
    for start in range(0, n, READ_ROWS):
        end = min(n, start + READ_ROWS)
        lo, hi = max(0, start - radius), min(n, end + radius)  # the block and the neighbours its windows reach
        masks = {d: same_session[d][lo:hi - d] for d in same_session}
        norms[start:end] = np.linalg.norm(_window_sums(vectors[lo:hi], masks, radius), axis=1)[start - lo:end - lo]
    return np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)


_cache: "OrderedDict[tuple[int, str], TurnMatrix]" = OrderedDict()
_building: set[tuple[int, str]] = set()
_too_large: dict[tuple[int, str], tuple[int, int]] = {}  # a scope over the budget, at the token it was seen at
_last_build: dict[tuple[int, str], tuple[float, float]] = {}  # when the scope's last build ended, and how long it took
# A scope's next build waits this many times its last one's length after it ended: a scope written without pause
# (a new token every index batch) is searched through its graphs, and reading it again and again would take about
# a third of a core at most.
REBUILD_BACKOFF = 2.0
_lock = threading.Lock()


def vector_token(scope_id: int) -> tuple[int, int]:
    """The scope's turn-vector changes so far: (how many rows, the largest id) of `retrieval_vectorchange`."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), coalesce(max(id), 0) FROM retrieval_vectorchange WHERE scope_id = %s", [scope_id])
        count, top = cursor.fetchone()
    return int(count), int(top)


# The rows of `retrieval_vectorchange` a scope keeps before the indexer prunes them to its newest.
CHANGES_KEPT = 1000


def vector_changes_prune(scope_id: int) -> int:
    """Keep only the scope's newest change row once it holds more than CHANGES_KEPT (the count falls, so
    the processes holding its matrix build it again, once); returns how many were deleted."""
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM retrieval_vectorchange WHERE scope_id = %s AND id < (SELECT max(id) FROM retrieval_vectorchange WHERE scope_id = %s)"
            " AND (SELECT count(*) FROM retrieval_vectorchange WHERE scope_id = %s) > %s",
            [scope_id, scope_id, scope_id, CHANGES_KEPT],
        )
        return cursor.rowcount


def matrix_for(*, scope: Scope, embedder: Embedder, background: bool = True) -> TurnMatrix | None:
    """The scope's matrix if one is held and still the scope's latest; else None, and a new one is built
    (in a background thread, or here when `background` is false). Off (None) when RETRIEVAL_MATRIX_MB is 0."""
    budget = int(settings.RETRIEVAL_MATRIX_MB) * 2**20
    if budget <= 0:
        return None
    key = (scope.pk, embedder.name)
    token = vector_token(scope.pk)
    with _lock:
        held = _cache.get(key)
        if held is not None and held.token == token:
            _cache.move_to_end(key)
            return held
        if held is not None:  # stale: not kept meanwhile (it may hold an erased turn's vector)
            del _cache[key]
        if _too_large.get(key) == token or key in _building:
            return None
        if key in _last_build and time.monotonic() - _last_build[key][0] < REBUILD_BACKOFF * _last_build[key][1]:
            return None  # built a moment ago and changed since: written to now, the graphs answer
        _building.add(key)
    if not background:
        return _build_and_keep(key, embedder, budget)
    threading.Thread(target=_build_in_background, args=(key, embedder, budget), name=f"matrix-{scope.pk}", daemon=True).start()
    return None


def matrix_forget(scope_id: int | None = None) -> None:
    """Drop the held matrices (of one scope, or all)."""
    with _lock:
        for key in [k for k in _cache if scope_id is None or k[0] == scope_id]:
            del _cache[key]
        for held in (_too_large, _last_build):
            for key in [k for k in held if scope_id is None or k[0] == scope_id]:
                del held[key]


def _build_in_background(key: tuple[int, str], embedder: Embedder, budget: int) -> None:
    try:
        _build_and_keep(key, embedder, budget)
    except Exception:  # the graphs answer meanwhile; the next recall asks again
        log.exception("building the turn matrix of scope %s failed", key[0])
    finally:
        connection.close()  # this thread's own connection


def _build_and_keep(key: tuple[int, str], embedder: Embedder, budget: int) -> TurnMatrix | None:
    started = time.monotonic()
    try:
        built = _build(scope_id=key[0], embedder=embedder, budget=budget)
        with _lock:
            _last_build[key] = (time.monotonic(), time.monotonic() - started)
            if isinstance(built, tuple):
                _too_large[key] = built
                return None
            _cache[key] = built
            _cache.move_to_end(key)
            while sum(m.nbytes for m in _cache.values()) > budget and len(_cache) > 1:
                _cache.popitem(last=False)
            return built
    finally:
        with _lock:
            _building.discard(key)


def _build(*, scope_id: int, embedder: Embedder, budget: int) -> TurnMatrix | tuple[int, int]:
    """The scope's matrix, read in one snapshot with the token it answers to; or that token, when the
    scope's turn vectors would not fit in `budget`."""
    dim = int(embedder.dim)
    outer = connection.in_atomic_block
    with transaction.atomic(), connection.cursor() as cursor:
        if not outer:  # else the caller's transaction is the snapshot (a test's)
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        token = vector_token(scope_id)
        cursor.execute(
            "SELECT count(*) FROM retrieval_embedding WHERE scope_id = %s AND model = %s AND target_type = 'doc_turn'",
            [scope_id, embedder.name],
        )
        expected = cursor.fetchone()[0]
        if expected * dim * 4 > budget:
            return token
        turn_ids = np.empty(expected, dtype=np.int64)
        sessions = np.empty(expected, dtype=np.int64)
        vectors = np.empty((expected, dim), dtype=np.float32)
        n = 0
        # Read in blocks through a server-side cursor (the same snapshot): a million turns' vectors as text are
        # gigabytes, so only one block's rows are held at a time, each parsed in one call.
        with connection.chunked_cursor() as rows_cursor:
            rows_cursor.execute(
                "SELECT d.target_id, t.session_id, e.vec::text FROM retrieval_embedding e"
                " JOIN retrieval_searchdocument d ON d.id = e.target_id AND d.scope_id = e.scope_id AND d.collection = %s"
                " JOIN memories_turn t ON t.id = d.target_id"
                " WHERE e.scope_id = %s AND e.model = %s AND e.target_type = 'doc_turn'"
                " ORDER BY t.session_id, t.position, t.id",
                [Collection.TURN, scope_id, embedder.name],
            )
            while rows := rows_cursor.fetchmany(READ_ROWS):
                end = n + len(rows)
                if end > len(turn_ids):  # rows committed since the count (a caller's READ COMMITTED snapshot)
                    more = end - len(turn_ids)
                    turn_ids, sessions = np.concatenate([turn_ids, np.empty(more, np.int64)]), np.concatenate([sessions, np.empty(more, np.int64)])
                    vectors = np.concatenate([vectors, np.empty((more, dim), np.float32)])
                turn_ids[n:end] = [r[0] for r in rows]
                sessions[n:end] = [r[1] for r in rows]
                # One parse of the block's vectors' text ("[0.1,0.2,…]"), not one per row.
                block = np.fromstring(",".join(r[2][1:-1] for r in rows), dtype=np.float32, sep=",")
                vectors[n:end] = block.reshape(len(rows), dim)
                n = end
    turn_ids, sessions, vectors = turn_ids[:n], sessions[:n], vectors[:n]
    radius = max(WINDOW_RADII.values())
    same_session = {d: (sessions[d:] == sessions[:-d]).astype(np.float32) for d in range(1, radius + 1)}
    matrix = TurnMatrix(token, turn_ids, vectors, same_session, {})
    for collection, r in ((Collection.TURN, 0), *WINDOW_RADII.items()):
        matrix.inverse_norms[collection] = _inverse_window_norms(vectors, same_session, r)
    return matrix
