"""The one rule for which facts a question may return, as the ORM applies it (hydration, entity
facts) and as BM25 applies it compiled into its SQL: the same facts, edges included. Likewise the
moment rule for turns, as the ORM applies it and as turn hydration does in SQL."""

from datetime import UTC, datetime

import pytest

from memories.models import Fact, Turn
from memories.services.ingest import ingest_session
from retrieval.fulltext import bm25_candidates
from retrieval.indexing import index_pending
from retrieval.models import Collection
from retrieval.search.eligibility import document_filter, fact_eligible, moment_eligible
from retrieval.search.hydration import items_hydrate
from retrieval.search.question import Question
from retrieval.temporal import TimeWindow
from tests.retrieval.test_search import NOW, person

pytestmark = pytest.mark.django_db

Y2024 = datetime(2024, 1, 1, tzinfo=UTC)
Y2025 = datetime(2025, 1, 1, tzinfo=UTC)

# name: (status, valid_from, valid_to); created_at is 1 May 2023 for all (a missing valid_from begins then).
FACTS = {
    "current": ("active", Y2024, None),  # began exactly at the window's start
    "ended_at_start": ("superseded", datetime(2023, 1, 1, tzinfo=UTC), Y2024),  # valid_to equal to the window's start
    "retracted": ("retracted", datetime(2023, 6, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)),
    "inside": ("superseded", datetime(2024, 2, 1, tzinfo=UTC), datetime(2024, 3, 1, tzinfo=UTC)),
    "undated": ("active", None, None),  # open on both sides
    "ended_at_end": ("superseded", datetime(2023, 7, 1, tzinfo=UTC), Y2025),  # began before the window, ended at its end
    "held": ("held", Y2024, None),  # waits for review before recall: eligible for no question, whatever the window
}
W2024 = TimeWindow(Y2024, Y2025, "in 2024")
BEFORE_2024 = TimeWindow(None, Y2024, "before 2024")
SINCE_2024 = TimeWindow(Y2024, None, "since 2024")

CASES = [
    # (window, as_of, history, changes) → eligible facts
    ((None, None, False, False), {"current", "undated"}),
    ((None, None, True, False), {"current", "ended_at_start", "inside", "undated", "ended_at_end"}),
    ((W2024, None, False, False), {"current", "undated"}),
    ((W2024, None, True, False), {"current", "inside", "undated", "ended_at_end"}),
    ((W2024, None, False, True), {"current", "ended_at_start", "inside"}),  # began or ended in [start, end)
    ((BEFORE_2024, None, True, False), {"ended_at_start", "undated", "ended_at_end"}),
    ((SINCE_2024, None, True, True), {"current", "ended_at_start", "inside", "ended_at_end"}),
    ((None, Y2024, True, False), {"current", "undated", "ended_at_end"}),  # valid_to equal to as_of: no longer valid
    ((None, datetime(2023, 12, 31, tzinfo=UTC), True, False), {"ended_at_start", "undated", "ended_at_end"}),
    ((None, datetime(2024, 2, 1, tzinfo=UTC), True, False), {"current", "inside", "undated", "ended_at_end"}),
    ((W2024, datetime(2024, 2, 15, tzinfo=UTC), True, False), {"current", "inside", "undated", "ended_at_end"}),
]


@pytest.fixture
def facts(cast):
    scope = cast.scope_a
    ankesh = person(scope, "Ankesh")
    made = {}
    for name, (status, valid_from, valid_to) in FACTS.items():
        made[name] = Fact.objects.create(
            scope=scope, subject=ankesh, attribute="plays", value=name, value_normalized=name, sentence=f"Ankesh plays the cello ({name})",
            valid_from=valid_from, valid_to=valid_to, status=status, created_at=datetime(2023, 5, 1, tzinfo=UTC),
        )
    index_pending(scope=scope)
    return {fact.pk: name for name, fact in made.items()}


@pytest.mark.parametrize(("question", "expected"), CASES)
def test_the_orm_and_bm25_agree_on_which_facts_a_question_may_return(cast, facts, question, expected):
    window, as_of, history, changes = question
    q = Question(scope=cast.scope_a, text="cello", now=NOW, window=window, as_of=as_of, history=history, changes=changes,
                 kinds=("fact",))
    by_orm = {facts[pk] for pk in Fact.objects.in_scope(cast.scope_a).filter(fact_eligible(q)).values_list("pk", flat=True)}
    doc_filter, params = document_filter(q)
    hits = bm25_candidates(scope=cast.scope_a, lexemes=["cello"], collections=[Collection.FACT], limit=50, doc_filter=doc_filter,
                           params=params)
    by_bm25 = {facts[h.target_id] for h in hits.get(Collection.FACT, [])}
    assert by_orm == expected
    assert by_bm25 == expected


# Turns said at these moments; a window is [start, end), as_of includes its own moment.
TURN_MOMENTS = {
    "before": datetime(2023, 12, 31, 23, 59, tzinfo=UTC), "at_start": Y2024, "inside": datetime(2024, 6, 1, tzinfo=UTC),
    "at_end": Y2025, "after": datetime(2025, 3, 1, tzinfo=UTC),
}
TURN_CASES = [
    ((None, None), set(TURN_MOMENTS)),
    ((W2024, None), {"at_start", "inside"}),
    ((BEFORE_2024, None), {"before"}),
    ((SINCE_2024, None), {"at_start", "inside", "at_end", "after"}),
    ((None, Y2024), {"before", "at_start"}),
    ((W2024, datetime(2024, 3, 1, tzinfo=UTC)), {"at_start"}),
]


@pytest.mark.parametrize(("question", "expected"), TURN_CASES)
def test_turns_are_hydrated_by_the_same_moment_rule_the_orm_applies(cast, question, expected, settings):
    settings.RETRIEVAL_TIME_WINDOWS = "all"  # the windows narrow turns (the default narrows facts only)
    window, as_of = question
    messages = [{"id": name, "speaker": "Ankesh", "text": f"I played the cello ({name})", "occurred_at": moment.isoformat()}
                for name, moment in TURN_MOMENTS.items()]
    ingest_session(scope=cast.scope_a, session_id="s1", messages=messages, actor=cast.p_owner, enqueue=False)
    q = Question(scope=cast.scope_a, text="cello", now=NOW, window=window, as_of=as_of, history=False, changes=False, kinds=("turn",))
    turns = Turn.objects.in_scope(cast.scope_a)
    names = dict(turns.values_list("pk", "external_id"))
    by_orm = {names[pk] for pk in turns.filter(moment_eligible(q)).values_list("pk", flat=True)}
    hydrated = items_hydrate(q, [("turn", pk) for pk in names])
    assert by_orm == expected
    assert {item.source["turn"] for item in hydrated.values()} == expected
    assert all(item.source["session"] == "s1" and item.source["episode"] and item.speaker == "Ankesh" for item in hydrated.values())
    assert list(hydrated) == [("turn", pk) for pk in names if names[pk] in expected]  # in the order asked
    # Another team's turn asked for by id is not read: the statement filters by the question's scope.
    ingest_session(scope=cast.scope_b, session_id="s1", messages=messages[:1], actor=cast.p_outsider, enqueue=False)
    theirs = Turn.objects.in_scope(cast.scope_b).get().pk
    assert ("turn", theirs) not in items_hydrate(q, [("turn", theirs), *hydrated])
