"""The fourth round of issue 24's cross-validation (docs/ARCHITECTURE.md, "… a fourth round"): the
question's vector made from another phrasing of it (RETRIEVAL_DENSE_QUERY first-person, content),
a list question's head spread over sessions (RETRIEVAL_LIST_SESSION_CAP), both off, and the
speakers' own lists for questions asking for several things and for questions naming two speakers
(RETRIEVAL_SPEAKER_LISTS=conjectures+lists+pairs), which held and is the default. Each is a
candidate of `memoryweb eval locomo --cv`."""

from datetime import UTC, datetime

import pytest

from retrieval.cv import ALTERNATIVES, FUSION_SETTINGS, INDEX_SETTINGS, RULES_OFF, _list_stage, candidates_named
from retrieval.search import recall_evidence
from retrieval.search.fusion import sessions_spread
from retrieval.search.results import RecallItem
from retrieval.search.question import asks_list, dense_text, dense_variant
from memoryweb.errors import InvalidInput
from tests.retrieval.test_head_rules import _session

NOW = datetime(2024, 8, 1, tzinfo=UTC)
SPEAKERS = ("Melanie", "Jon Snow")


def test_the_variants_of_the_question_for_its_vector(settings):
    question = "What does Melanie like about Jon's paintings?"
    assert dense_variant(text=question, speakers=SPEAKERS, variant="asked") == question
    assert dense_variant(text=question, speakers=SPEAKERS, variant="unnamed") == "What does like about paintings?"
    assert dense_variant(text=question, speakers=SPEAKERS, variant="first-person") == "What does I like about my paintings?"
    assert dense_variant(text=question, speakers=SPEAKERS, variant="content") == "like about paintings"
    assert dense_variant(text="When did Jon Snow go to the support group?", speakers=SPEAKERS,
                         variant="content") == "go to the support group"
    # Nothing but the question's words and names: the question as asked rather than nothing.
    assert dense_variant(text="Who is Melanie?", speakers=SPEAKERS, variant="content") == "Who is Melanie?"
    assert dense_variant(text="Where is Ada?", speakers=(), variant="content") == "Where is Ada?"  # no speakers known
    assert dense_text(text=question, speakers=SPEAKERS) == "What does like about paintings?"  # the default: unnamed
    settings.RETRIEVAL_DENSE_QUERY = "first-person"
    assert dense_text(text=question, speakers=SPEAKERS) == "What does I like about my paintings?"


def test_a_list_question_is_read_from_a_plural_after_what_or_which():
    for question in ("What books has Melanie read?", "What activities does Melanie partake in?", "Which cities did Jon visit?",
                     "How many times has Jon been to the beach?", "What painting styles does she like?"):
        assert asks_list(question), question
    for question in ("What does Melanie like?", "What is his job?", "What kind of pot did she make?", "When did Jon go?",
                     "What was discussed?", "Would Caroline pursue writing?"):
        assert not asks_list(question), question


_SAID = [
    ("Ann", "I spent the weekend painting a lake at sunrise."), ("Bo", "That sounds peaceful."),
    ("Bo", "I painted the harbour boats last month."), ("Ann", "Lovely, boats are hard to paint."),
    ("Ann", "My sister visited from Oslo."), ("Bo", "Mine moved to Lyon for work."),
]


def _why(scope, query: str) -> dict[str, list[str]]:
    items = recall_evidence(scope=scope, query=query, k=10, filters={"kinds": ["turn"]}, now=NOW).items
    return {item.source["turn"]: item.why for item in items}


@pytest.mark.django_db(transaction=True)
def test_speaker_lists_for_list_questions_and_pairs_by_default(cast, settings):
    _session(cast.scope_a, cast.p_owner, _SAID)

    def lists(query: str) -> set[str]:
        return {why.split(" #")[0] for whys in _why(cast.scope_a, query).values() for why in whys if " said by " in why}

    question, pair = "What places has Bo painted?", "What did Ann and Bo paint?"
    assert asks_list(question) and not asks_list(pair)
    assert settings.RETRIEVAL_SPEAKER_LISTS == "conjectures+lists+pairs"  # held in the cross-validation
    assert lists(question) == {"vector turn said by Bo"}
    assert lists(pair) == {"vector turn said by Ann", "vector turn said by Bo"}
    assert lists("What did Bo paint?") == set()  # one thing, one speaker, no conjecture
    assert lists("Would Bo paint the lake?") == {"vector turn said by Bo"}  # conjectures as before
    settings.RETRIEVAL_SPEAKER_LISTS = "conjectures"  # the default before: neither
    assert lists(question) == set() and lists(pair) == set()
    settings.RETRIEVAL_SPEAKER_LISTS = "conjectures+lists"
    assert lists(question) == {"vector turn said by Bo"} and lists(pair) == set()


def test_the_fourth_round_is_cross_validated():
    alternatives = {c.name: c for c in ALTERNATIVES}
    assert alternatives["question in the first person"].settings == {"RETRIEVAL_DENSE_QUERY": "first-person"}
    assert alternatives["question's content words"].settings == {"RETRIEVAL_DENSE_QUERY": "content"}
    assert alternatives["list questions: 5 turns a session"].settings == {"RETRIEVAL_LIST_SESSION_CAP": 5}
    assert _list_stage(alternatives["list questions: 5 turns a session"]) == ()  # re-fused from the same lists
    off = {c.name: c.settings for c in RULES_OFF}
    assert off["speaker lists for conjectures only"] == {"RETRIEVAL_SPEAKER_LISTS": "conjectures"}
    assert off["no speaker lists for pairs"] == {"RETRIEVAL_SPEAKER_LISTS": "conjectures+lists"}
    for name in ("question in the first person", "question's content words"):
        assert _list_stage(alternatives[name]) != ()  # lists gathered again under it
        assert not set(alternatives[name].settings) & (FUSION_SETTINGS | INDEX_SETTINGS)
    for name in ("speaker lists for conjectures only", "no speaker lists for list questions", "no speaker lists for pairs"):
        assert _list_stage({c.name: c for c in RULES_OFF}[name]) != ()
    chosen = candidates_named(["question in the first person", "rrf k 20"])
    assert [c.name for c in chosen] == ["default", "rrf k 20", "question in the first person"]
    with pytest.raises(InvalidInput):
        candidates_named(["no such setting"])


def _item(pk: int, session: str) -> RecallItem:
    return RecallItem(kind="turn", id=str(pk), text="", score=1.0 / pk, lanes={}, source={"session": session}, pk=pk)


def test_a_list_question_takes_at_most_cap_turns_of_a_session_in_its_head():
    ranked = [_item(1, "s1"), _item(2, "s1"), _item(3, "s1"), _item(4, "s2"), _item(5, "s1"), _item(6, "s3"), _item(7, "s1")]

    class Q:
        text = "What books has Melanie read?"

    spread = sessions_spread(Q, ranked, cap=2, depth=4)
    assert [i.pk for i in spread] == [1, 2, 4, 6, 3, 5, 7]  # s1's third and later move below the first four
    assert [i.pk for i in sessions_spread(Q, ranked, cap=2, depth=2)] == [1, 2, 3, 4, 5, 6, 7]  # the head is full first
    assert sessions_spread(Q, ranked, cap=0, depth=4) == ranked  # off
    Q.text = "What book did Melanie read last?"  # not a list question: its order kept
    assert sessions_spread(Q, ranked, cap=2, depth=4) == ranked
