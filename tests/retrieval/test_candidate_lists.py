"""The candidate lists tried for issue 24's multi-hop evidence, each judged by the cross-validation
(retrieval/cv.py) and off unless it holds: one list per speaker the question names, of their own
turns (RETRIEVAL_SPEAKER_LISTS), and RM3-style lexical feedback (RETRIEVAL_LEXICAL_FEEDBACK). Speaker lists for conjectures
("Would Caroline …?") held and are on; the rest are off."""

from datetime import UTC, datetime

import pytest

from memories.models import Turn
from retrieval.cv import ALTERNATIVES, FUSION_SETTINGS, RULES_OFF, _list_stage
from retrieval.embedder import scope_embedder
from retrieval.models import Collection
from retrieval.search import recall_evidence
from retrieval.search.candidates import feedback_terms
from retrieval.search.question import asks_conjecture, question_read, speakers_named
from retrieval.vector import speaker_vector_candidates
from tests.retrieval.test_head_rules import _session

NOW = datetime(2024, 8, 1, tzinfo=UTC)


def _why(scope, query: str, k: int = 10) -> dict[str, list[str]]:
    items = recall_evidence(scope=scope, query=query, k=k, filters={"kinds": ["turn"]}, now=NOW).items
    return {item.source["turn"]: item.why for item in items}


def test_every_speaker_named_is_read_and_the_possessive_only_when_asked(cast, settings):
    speakers = ("Jon", "Gina", "Ann Lee")
    assert speakers_named(cast.scope_a, "What have Jon and Gina both done?", speakers) == ["Jon", "Gina"]
    assert speakers_named(cast.scope_a, "Where did Ann Lee go?", speakers) == ["Ann Lee"]
    assert speakers_named(cast.scope_a, "What do Gina's kids like?", speakers) == []  # RETRIEVAL_POSSESSIVE_SPEAKER off
    assert speakers_named(cast.scope_a, "What do Gina's kids like?", speakers, possessive=True) == ["Gina"]
    settings.RETRIEVAL_POSSESSIVE_SPEAKER = True
    assert speakers_named(cast.scope_a, "What do Gina's kids like?", speakers) == ["Gina"]


def test_a_conjecture_is_read_from_its_modal_words():
    for question in ("Would Caroline pursue writing as a career?", "What might Jon do next?", "Is Tim likely to move?",
                     "What pets wouldn't cause Joanna discomfort?", "Could Gina run a marathon?"):
        assert asks_conjecture(question), question
    for question in ("What did Caroline research?", "When did Jon open his studio?", "Which likes did Tim get?"):
        assert not asks_conjecture(question), question


_SAID = [
    ("Ann", "I spent the weekend painting a lake at sunrise."), ("Bo", "That sounds peaceful."),
    ("Bo", "I painted the harbour boats last month."), ("Ann", "Lovely, boats are hard to paint."),
    ("Ann", "My sister visited from Oslo."), ("Bo", "Mine moved to Lyon for work."),
    ("Ann", "We baked bread together."), ("Bo", "Did it rise?"),
]


@pytest.mark.django_db(transaction=True)
def test_a_list_per_named_speaker_holds_only_their_own_turns(cast, settings, monkeypatch):
    _session(cast.scope_a, cast.p_owner, _SAID)
    embedder = scope_embedder(cast.scope_a)
    vector = embedder.embed(["painting"])[0]
    turns = dict(Turn.objects.filter(scope=cast.scope_a).values_list("pk", "speaker"))
    for speaker in ("Ann", "Bo"):
        hits = speaker_vector_candidates(scope=cast.scope_a, query_vector=vector, embedder=embedder, speaker=speaker,
                                         collection=Collection.TURN, limit=50)
        assert len(hits) == 4 and {turns[h.target_id] for h in hits} == {speaker}
        assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)

    question = "What have Ann and Bo both painted?"
    conjecture = "Would Ann and Bo paint together?"

    def lists(query: str) -> set[str]:
        return {why.split(" #")[0] for whys in _why(cast.scope_a, query).values() for why in whys if " said by " in why}

    assert settings.RETRIEVAL_SPEAKER_LISTS == "conjectures+lists+pairs"  # the default (test_query_variants.py)
    settings.RETRIEVAL_SPEAKER_LISTS = "conjectures"  # the default before
    assert lists(question) == set()  # not a conjecture
    assert lists(conjecture) == {"vector turn said by Ann", "vector turn said by Bo"}
    assert lists("Would Ann paint the boats?") == {"vector turn said by Ann"}
    settings.RETRIEVAL_SPEAKER_LISTS = "off"
    assert lists(conjecture) == set()
    settings.RETRIEVAL_SPEAKER_LISTS = "conjectures+pairs"
    assert lists(question) == {"vector turn said by Ann", "vector turn said by Bo"}
    assert lists("What has Ann painted?") == set()  # one speaker, no conjecture
    settings.RETRIEVAL_SPEAKER_LISTS = "all"
    assert lists("What has Ann painted?") == {"vector turn said by Ann"}
    # A scope searched through the graph (too large to scan exactly) gets no speaker lists.
    monkeypatch.setattr("retrieval.search.candidates.vector_search_exact", lambda **kwargs: False)
    assert lists(question) == set() and lists(conjecture) == set()


_BAKED = [
    ("Ann", "What do you bake on Sundays?"), ("Bo", "Sourdough bread with a rye starter."),
    ("Ann", "My sourdough starter died in the heat."), ("Bo", "Feed the rye starter twice a day."),
    ("Ann", "I went hiking in the Alps."), ("Bo", "The Alps in June are perfect."),
    ("Ann", "Our sourdough loaf had a crisp crust and an open crumb."),
]


@pytest.mark.django_db(transaction=True)
def test_lexical_feedback_lends_the_words_two_of_the_best_turns_share(cast, settings):
    _session(cast.scope_a, cast.p_owner, _BAKED)
    pk = dict(Turn.objects.filter(scope=cast.scope_a).values_list("external_id", "pk"))
    q = question_read(scope=cast.scope_a, query="What does Bo bake?", filters={"kinds": ["turn"]}, as_of=None,
                      include_history=False, now=NOW, speaker="")
    terms = feedback_terms(q=q, turn_ids=[pk["t0"], pk["t1"], pk["t2"], pk["t3"]], lexemes=["bake"], terms=5)
    assert set(terms) == {"sourdough", "starter", "rye"}  # each in two of the four; "bake" is the question's own
    assert "alp" not in terms and "bread" not in terms  # one turn's word is not the topic's
    assert feedback_terms(q=q, turn_ids=[pk["t0"], pk["t1"], pk["t2"], pk["t3"]], lexemes=["bake"], terms=1) == [terms[0]]
    assert feedback_terms(q=q, turn_ids=[pk["t4"], pk["t6"]], lexemes=["bake"], terms=5) == []  # nothing shared

    question = "What does Bo bake?"
    assert not any("feedback" in why for whys in _why(cast.scope_a, question).values() for why in whys)  # off by default
    settings.RETRIEVAL_LEXICAL_FEEDBACK = 5
    found = _why(cast.scope_a, question)
    # The loaf shares no word with the question; the feedback list finds it by "sourdough".
    assert any(why.startswith("bm25 turn with feedback words #") for why in found["t6"])
    assert not any(why.startswith("bm25 turn #") for why in found["t6"])


def test_the_candidate_rules_are_cross_validated():
    alternatives = {c.name: c for c in ALTERNATIVES}
    assert alternatives["speaker lists"].settings == {"RETRIEVAL_SPEAKER_LISTS": "all"}
    off = {c.name: c.settings for c in RULES_OFF}
    assert off["no speaker lists for list questions"] == {"RETRIEVAL_SPEAKER_LISTS": "conjectures+pairs"}
    assert off["no speaker lists"] == {"RETRIEVAL_SPEAKER_LISTS": "off"}
    assert _list_stage(alternatives["speaker lists"]) != ()  # gathered again: a list of its own
    assert alternatives["lists 100 deep"].settings == {"RETRIEVAL_POOL_MIN": 100}
    assert "RETRIEVAL_LEXICAL_FEEDBACK" in FUSION_SETTINGS  # a second pass after the lists gathered once
    assert _list_stage(alternatives["lexical feedback 5"]) == ()
