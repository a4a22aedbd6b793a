"""The fourth round of issue 24's cross-validation (docs/ARCHITECTURE.md, "… a fourth round"): the
question's vector made from another phrasing of it (RETRIEVAL_DENSE_QUERY first-person, content),
such a phrasing as one more vector list (RETRIEVAL_DENSE_EXTRA), and the speakers' own lists for
questions asking for several things (RETRIEVAL_SPEAKER_LISTS=conjectures+lists). Each is a
candidate of `memoryweb eval locomo --cv`; what the protocol kept is on by default."""

from datetime import UTC, datetime

import pytest

from retrieval.cv import ALTERNATIVES, FUSION_SETTINGS, INDEX_SETTINGS, _list_stage, candidates_named
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
def test_the_rephrased_list_only_when_asked(cast, settings):
    _session(cast.scope_a, cast.p_owner, _SAID)
    question = "What did Ann paint?"
    assert not any("rephrased" in why for whys in _why(cast.scope_a, question).values() for why in whys)
    settings.RETRIEVAL_DENSE_EXTRA = "first-person"
    found = _why(cast.scope_a, question)
    assert any(why.startswith("vector turn rephrased #") for whys in found.values() for why in whys)


@pytest.mark.django_db(transaction=True)
def test_speaker_lists_for_list_questions_only_on_that_occasion(cast, settings):
    _session(cast.scope_a, cast.p_owner, _SAID)
    question = "What places has Bo painted?"
    assert asks_list(question)
    assert not any("said by" in why for whys in _why(cast.scope_a, question).values() for why in whys)  # the default
    settings.RETRIEVAL_SPEAKER_LISTS = "conjectures+lists"
    found = _why(cast.scope_a, question)
    assert any(why.startswith("vector turn said by Bo #") for whys in found.values() for why in whys)
    assert not any("said by" in why for whys in _why(cast.scope_a, "What did Bo paint?").values() for why in whys)


def test_the_fourth_round_is_cross_validated():
    alternatives = {c.name: c for c in ALTERNATIVES}
    assert alternatives["question in the first person"].settings == {"RETRIEVAL_DENSE_QUERY": "first-person"}
    assert alternatives["question's content words"].settings == {"RETRIEVAL_DENSE_QUERY": "content"}
    assert alternatives["rephrased list: first person"].settings == {"RETRIEVAL_DENSE_EXTRA": "first-person"}
    assert alternatives["speaker lists for list questions too"].settings == {"RETRIEVAL_SPEAKER_LISTS": "conjectures+lists"}
    for name in ("question in the first person", "rephrased list: content words", "speaker lists for list questions too"):
        assert _list_stage(alternatives[name]) != ()  # lists gathered again under it
        assert not set(alternatives[name].settings) & (FUSION_SETTINGS | INDEX_SETTINGS)
    chosen = candidates_named(["rrf k 20", "question in the first person"])
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
