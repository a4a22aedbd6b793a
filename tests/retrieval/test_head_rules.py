"""The head's rules after fusion (retrieval/search/fusion.py: head_preferred; hydration.py:
replies_follow), each judged by the cross-validation (retrieval/cv.py): the named speaker's lines
and the question's period preferred, and a question asked in the conversation followed by its reply."""

from datetime import UTC, datetime, timedelta

import pytest

from memories.services.ingest import ingest_session
from retrieval.cv import ALTERNATIVES, FUSION_SETTINGS, RULES_OFF, _list_stage
from retrieval.indexing import index_pending
from retrieval.search import recall_evidence
from retrieval.search.fusion import Fused, lanes_score
from retrieval.search.question import question_read
from retrieval.search.results import RecallItem

NOW = datetime(2024, 8, 1, tzinfo=UTC)


def _read(scope, query: str):
    return question_read(scope=scope, query=query, filters={"kinds": ["turn", "fact"]}, as_of=None, include_history=False,
                         now=NOW, speaker="", speakers=("Ann", "Bo"))


def _ranked(q, rows: list[tuple[str, int, str, datetime, float]]) -> list[int]:
    """`rows`: (kind, pk, speaker, when, fused score); the pks in the lanes' order."""
    items = {(kind, pk): RecallItem(kind=kind, id=str(pk), text="…", score=0.0, lanes={"_importance": None}, speaker=speaker,
                                    occurred_at=when, valid_from=when, pk=pk)
             for kind, pk, speaker, when, _ in rows}
    fused = Fused(scores={(kind, pk): score for kind, pk, _, _, score in rows}, ranked=[], why={})
    return [item.pk for item in lanes_score(items, fused, q=q)]


@pytest.mark.django_db
def test_the_named_speakers_lines_are_preferred_over_the_others_close_behind(cast, settings):
    settings.RETRIEVAL_SPEAKER_PREFERENCE = 0.1  # off by default: it did not hold in the cross-validation
    when = NOW - timedelta(days=30)
    rows = [("turn", 1, "Bo", when, 1.0), ("turn", 2, "Ann", when, 0.95), ("fact", 3, "", when, 1.02)]
    q = _read(cast.scope_a, "What did Ann adopt?")
    assert _ranked(q, rows) == [2, 3, 1]  # Ann's line × 1.1 passes Bo's and the fact, which has no speaker to prefer
    assert _ranked(_read(cast.scope_a, "What did Ann and Bo adopt?"), rows) == [3, 1, 2]  # two named: no preference
    assert _ranked(_read(cast.scope_a, "What did Ann adopt?"), [("turn", 1, "Bo", when, 1.0), ("turn", 2, "Ann", when, 0.8)]) == [1, 2]
    settings.RETRIEVAL_SPEAKER_PREFERENCE = 0.0
    assert _ranked(_read(cast.scope_a, "What did Ann adopt?"), rows) == [3, 1, 2]


@pytest.mark.django_db
def test_lines_said_in_the_questions_period_or_a_week_after_it_are_preferred(cast, settings):
    rows = [("turn", 1, "Ann", datetime(2024, 7, 1, tzinfo=UTC), 1.0),  # a month after May
            ("turn", 2, "Ann", datetime(2024, 5, 20, tzinfo=UTC), 0.8),  # in May
            ("turn", 3, "Ann", datetime(2024, 6, 5, tzinfo=UTC), 0.75)]  # five days after
    question = "What did we plan in May 2024?"
    assert _read(cast.scope_a, question).moment_window is None  # the period does not narrow turns
    assert _ranked(_read(cast.scope_a, question), rows) == [2, 3, 1]
    assert _ranked(_read(cast.scope_a, "What did we plan?"), rows) == [1, 2, 3]  # no period named
    settings.RETRIEVAL_TIME_PREFERENCE = 0.0
    assert _ranked(_read(cast.scope_a, question), rows) == [1, 2, 3]
    settings.RETRIEVAL_TIME_PREFERENCE = 0.5
    settings.RETRIEVAL_TIME_WINDOWS = "all"  # the period narrows turns: nothing outside it to prefer over
    assert _ranked(_read(cast.scope_a, question), rows) == [1, 2, 3]


def _session(scope, actor, said: list[tuple[str, str]]) -> None:
    start = datetime(2024, 5, 1, 9, tzinfo=UTC)
    messages = [{"id": f"t{i}", "speaker": speaker, "text": text, "occurred_at": start + timedelta(minutes=i)}
                for i, (speaker, text) in enumerate(said)]
    ingest_session(scope=scope, session_id="s1", messages=messages, actor=actor, enqueue=False)
    index_pending(scope=scope)


_SAID = [
    ("Ann", "Your quilt looks lovely."), ("Bo", "Thanks, it took all winter."),
    ("Ann", "What gave you the idea for the colours of the quilt?"),
    ("Bo", "My grandmother's garden in Provence, lavender and sunflowers."),
    ("Ann", "Sounds dreamy."), ("Bo", "It was."), ("Ann", "Shall we meet on Friday?"), ("Bo", "Sure."),
]


@pytest.mark.django_db(transaction=True)
def test_a_question_asked_in_the_conversation_is_followed_by_its_reply(cast, settings):
    _session(cast.scope_a, cast.p_owner, _SAID)
    settings.RETRIEVAL_WINDOW_RADIUS = 0  # no window votes: the reply shares no word with the question
    settings.RETRIEVAL_RERANK = False  # the rule on the pipeline's own order (the learned order reads replies too)

    def ranked(k: int = 5) -> list:
        return recall_evidence(scope=cast.scope_a, query="What gave Bo the idea for the colours of the quilt?", k=k,
                               filters={"kinds": ["turn"]}, now=NOW).items

    items = ranked()
    assert items[0].source["turn"] == "t2"  # the question asked in the conversation matches best
    assert items[1].source["turn"] == "t3" and "the reply to a question ranked #1" in items[1].why
    assert items[1].score == items[0].score
    settings.RETRIEVAL_REPLY_FOLLOWS = 0
    assert "t3" not in [item.source["turn"] for item in ranked()[:2]]


@pytest.mark.django_db(transaction=True)
def test_a_question_is_not_followed_by_its_askers_own_next_line(cast, settings):
    said = [("Ann", "What gave you the idea for the colours of the quilt?"), ("Ann", "Lavender, I bet."),
            ("Bo", "My grandmother's garden in Provence.")]
    _session(cast.scope_a, cast.p_owner, said)
    settings.RETRIEVAL_WINDOW_RADIUS = 0
    items = recall_evidence(scope=cast.scope_a, query="What gave Bo the idea for the colours of the quilt?", k=3,
                            filters={"kinds": ["turn"]}, now=NOW).items
    assert items[0].source["turn"] == "t0"
    assert not any("the reply to" in why for item in items for why in item.why)  # the next line is Ann's own


def test_the_head_rules_are_judged_and_act_after_the_lists():
    off = {c.name: c.settings for c in RULES_OFF}
    assert {c.name: c.settings for c in ALTERNATIVES}["speaker preference 0.1"] == {"RETRIEVAL_SPEAKER_PREFERENCE": 0.1}
    assert off["no time preference"] == {"RETRIEVAL_TIME_PREFERENCE": 0.0}
    assert off["no reply after a question"] == {"RETRIEVAL_REPLY_FOLLOWS": 0}
    assert {"RETRIEVAL_SPEAKER_PREFERENCE", "RETRIEVAL_TIME_PREFERENCE", "RETRIEVAL_REPLY_FOLLOWS"} <= FUSION_SETTINGS
    # They act after the lists: their candidates re-fuse the lists gathered once (candidates_memo).
    assert all(_list_stage(c) == () for c in RULES_OFF + ALTERNATIVES if set(c.settings) <= FUSION_SETTINGS)
