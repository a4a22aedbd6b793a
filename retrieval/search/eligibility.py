"""Which rows a question may return, written once.

A fact: never one held for review (`FactStatus.HELD`, a "review before recall" scope's
extracted fact no person approved yet: the status lists below leave it out);
active only by default; superseded ones too for history and "what changed" questions,
or when `as_of` pins a date (then only the facts valid on it: `valid_from ≤ as_of < valid_to`,
open sides allowed). In a time window, a fact that held at some time inside it (its interval
`[valid_from or created_at, valid_to)` overlaps the window), or for "what changed" one that began
or ended inside it. An episode, a turn or a search document: it happened inside the window and
by `as_of`. Windows are half-open, `[start, end)`, either side may be open.

The rules are Django `Q` objects: hydration and the entity look-ups filter with them, and BM25,
which filters inside its own SQL so that its pool fills with eligible documents, gets them
compiled to SQL (`document_filter`).
"""

from datetime import datetime
from functools import lru_cache

from django.core.exceptions import FullResultSet
from django.db import connection
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.functions import Coalesce
from django.db.models.lookups import GreaterThanOrEqual, IsNull, LessThan

from memories.models import Fact, FactStatus, Turn
from retrieval.models import Collection, SearchDocument
from retrieval.search.question import Question
from retrieval.temporal import TimeWindow


def fact_eligible(q: Question) -> Q:
    """The facts `q` may return."""
    return _fact_rule(window=q.window, as_of=q.as_of, history=q.history, changes=q.changes)


def _fact_rule(*, window: TimeWindow | None, as_of: datetime | None, history: bool, changes: bool) -> Q:
    if as_of is not None:
        rule = Q(status__in=[FactStatus.ACTIVE, FactStatus.SUPERSEDED])
        rule &= Q(valid_from__isnull=True) | Q(valid_from__lte=as_of)
        rule &= Q(valid_to__isnull=True) | Q(valid_to__gt=as_of)
    elif history or changes:
        rule = Q(status__in=[FactStatus.ACTIVE, FactStatus.SUPERSEDED])
    else:
        rule = Q(status=FactStatus.ACTIVE)
    if window is None:
        return rule
    began = Coalesce("valid_from", "created_at")
    start, end = window.start, window.end
    if changes:
        return rule & (_within(began, start, end) | _within(F("valid_to"), start, end))
    if start is not None:
        rule &= Q(valid_to__isnull=True) | Q(valid_to__gt=start)
    if end is not None:
        rule &= Q(LessThan(began, end))
    return rule


def moment_eligible(q: Question, field: str = "occurred_at") -> Q:
    """The episodes, turns or search documents `q` may return, by the moment in `field`."""
    return _moment_rule(window=q.moment_window, as_of=q.as_of, field=field)


def _moment_rule(*, window: TimeWindow | None, as_of: datetime | None, field: str) -> Q:
    rule = Q()
    if as_of is not None:
        rule &= Q(**{f"{field}__lte": as_of})
    if window is not None:
        rule &= _within(F(field), window.start, window.end)
    return rule


def document_filter(q: Question) -> tuple[str, list]:
    """Both rules as one SQL condition on `retrieval_searchdocument` (a fact's document by its
    fact, any other by its moment), with `%(pN)s` parameters, as `bm25_candidates` takes it."""
    sql, params = _document_sql(q.window, q.moment_window, q.as_of, q.history, q.changes)
    return sql, list(params)


# A window holding at most this many documents (other than facts') is searched by its documents:
# BM25 scores only their postings. A wider one is searched as before, reading documents in score
# order until enough pass (most do).
WINDOW_PREFILTER_MAX = 5000


def window_documents(q: Question, collections: list[str]) -> int:
    """How many documents of `collections` `q`'s window and `as_of` let through, counted up to
    WINDOW_PREFILTER_MAX (a fact's document counts once for any: facts go by their validity). 0:
    nothing in the window could be found, so it is not searched at all ("last year" in a
    conversation of this year)."""
    moments = [c for c in collections if c != Collection.FACT]
    count = 0
    with connection.cursor() as cursor:
        if moments:
            rule, params = _moment_sql(q.moment_window, q.as_of)
            cursor.execute(
                "SELECT count(*) FROM (SELECT 1 FROM retrieval_searchdocument WHERE retrieval_searchdocument.scope_id = %(scope)s"
                f" AND retrieval_searchdocument.collection = ANY(%(collections)s){rule} LIMIT %(cap)s) s",
                {"scope": q.scope.pk, "collections": moments, "cap": WINDOW_PREFILTER_MAX, **_named("m", params)},
            )
            count = cursor.fetchone()[0]
        if Collection.FACT in collections:
            rule, params = _document_sql(q.window, q.moment_window, q.as_of, q.history, q.changes)
            cursor.execute(
                "SELECT EXISTS (SELECT 1 FROM retrieval_searchdocument WHERE retrieval_searchdocument.scope_id = %(scope)s"
                f" AND retrieval_searchdocument.collection = %(fact)s{rule})",
                {"scope": q.scope.pk, "fact": Collection.FACT, **_named("p", params)},
            )
            count += int(cursor.fetchone()[0])
    return count


def window_postings(q: Question) -> tuple[str, dict]:
    """For BM25 (`bm25_candidates`' `posting_filter`): only the postings of the window's
    documents, as a condition on the posting `p` with its named parameters; a fact's postings all
    pass (its document filter judges the fact)."""
    rule, params = _moment_sql(q.moment_window, q.as_of)
    return (
        f" AND (p.collection = '{Collection.FACT}' OR p.document_id IN (SELECT retrieval_searchdocument.id"
        " FROM retrieval_searchdocument WHERE retrieval_searchdocument.scope_id = %(scope)s"
        f" AND retrieval_searchdocument.collection <> '{Collection.FACT}'{rule}))",
        _named("m", params),
    )


def turn_moment_sql(q: Question) -> tuple[str, dict]:
    """The moment rule (`moment_eligible`) on `memories_turn.occurred_at`, as " AND <SQL>" and its
    named parameters `%(tN)s`: for reading turns in SQL (hydration) by the one rule."""
    rule, params = _turn_moment_sql(q.moment_window, q.as_of)
    return rule, _named("t", params)


def _named(prefix: str, params) -> dict:
    """Positional parameters as the named ones `_compiled` wrote for them."""
    return {f"{prefix}{index}": value for index, value in enumerate(params)}


def _compiled(rule: Q, prefix: str, model=SearchDocument) -> tuple[str, tuple]:
    """`rule` on `model`'s table (`retrieval_searchdocument`) as " AND <SQL>" and its values; Django's
    placeholders become named ones, in order (`%(<prefix>N)s`, as BM25's statement takes them)."""
    query = model.objects.filter(rule).query
    try:
        sql, params = query.get_compiler(connection=connection).compile(query.where)
    except FullResultSet:  # no condition (no window, no as_of): every row passes
        return "", ()
    first, *rest = sql.split("%s")
    return " AND " + first + "".join(f"%({prefix}{index})s{part}" for index, part in enumerate(rest)), tuple(params)


@lru_cache(maxsize=256)
def _moment_sql(window: TimeWindow | None, as_of: datetime | None) -> tuple[str, tuple]:
    """The moment rule alone (`_moment_rule`, a turn's, window's or episode's) on
    `retrieval_searchdocument.occurred_at`, parameters `%(mN)s`."""
    return _compiled(_moment_rule(window=window, as_of=as_of, field="occurred_at"), "m")


@lru_cache(maxsize=256)
def _turn_moment_sql(window: TimeWindow | None, as_of: datetime | None) -> tuple[str, tuple]:
    return _compiled(_moment_rule(window=window, as_of=as_of, field="occurred_at"), "t", model=Turn)


# Building and compiling the querysets costs about a millisecond on every BM25 search; most
# questions have no window and no as_of, so they share a handful of compiled conditions.
@lru_cache(maxsize=256)
def _document_sql(
    window: TimeWindow | None, moment_window: TimeWindow | None, as_of: datetime | None, history: bool, changes: bool,
) -> tuple[str, tuple]:
    facts = Fact.objects.filter(
        _fact_rule(window=window, as_of=as_of, history=history, changes=changes), pk=OuterRef("target_id"), scope=OuterRef("scope_id"),
    )
    moments = _moment_rule(window=moment_window, as_of=as_of, field="occurred_at")
    rule = Q(Q(collection=Collection.FACT), Exists(facts)) | Q(~Q(collection=Collection.FACT), moments)
    return _compiled(rule, "p")


def _within(moment, start: datetime | None, end: datetime | None) -> Q:
    """`moment` in `[start, end)`; a missing moment is in no window (a comparison with NULL is
    not true, and with both sides open only the NULL test is left)."""
    if start is None and end is None:
        return Q(IsNull(moment, False))
    rule = Q()
    if start is not None:
        rule &= Q(GreaterThanOrEqual(moment, start))
    if end is not None:
        rule &= Q(LessThan(moment, end))
    return rule
