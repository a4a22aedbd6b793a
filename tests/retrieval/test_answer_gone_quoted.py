"""A superseded value is not offered as current (the eighth pass): the quote under an answer elides
("…") a value the sentence itself says is gone (after from / off / not / rather than / than …), a
value a later correction replaced, and one the scope holds only as superseded; never the answer's own
value, never a date, and not when the question asks about the past. A "before" answer names the later
value only when the question did."""

from datetime import UTC, datetime

import pytest

from retrieval.answer import _corrected_away, _current_quoted, answer
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

NOW = datetime(2025, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize("sentence, span, kept, gone", [
    ("we are switching the design reviews from Whimsical to Figjam next week", "Figjam", "Figjam", "Whimsical"),
    ("I moved the expense claims off Concur onto Pleo in March", "Pleo", "Pleo", "Concur"),
    ("payroll has gone to Deel, instead of Remote, since the spring", "Deel", "Deel", "Remote"),
    ("the demo kit is kept in the comms cupboard, not the reception desk", "comms cupboard", "comms cupboard", "reception desk"),
    ("from 3 March Yusuf reports to Hanne rather than Piet", "Hanne", "3 March", "Piet"),
    ("she says Linear was far quicker than the old Jira board", "Linear", "Linear", "Jira"),
])
def test_a_value_the_sentence_says_is_gone_is_elided(sentence, span, kept, gone):
    quoted = _current_quoted(sentence, span=span, scope=None, gone=set())
    assert kept in quoted and gone not in quoted and "…" in quoted


@pytest.mark.parametrize("sentence", [
    "please do not move the kiln logs, it is not ready yet",
    "the audit runs from 4 May to 9 May",
    "we heard from them today",
])
def test_no_value_said_gone_leaves_the_quote_as_said(sentence):
    assert _current_quoted(sentence, span="X-ray", scope=None, gone=set()) == sentence


def test_the_value_a_correction_replaced_is_elided_from_both_sentences():
    gone = _corrected_away("the print proofs go to bay K12 on Friday", "the print proofs go to bay K14 on Friday")
    assert gone == {"k12"}
    assert _current_quoted("oops, K14. K12 is the loading dock", span="K14", scope=None, gone=gone) == "oops, K14. … is the loading dock"


@pytest.mark.django_db
def test_a_switch_quoted_offers_only_the_new_value_and_before_asks_for_the_old(say):
    say("maya", "We moved our CI from Jenkins to GitHub Actions in January 2025.", "2025-01-20")
    now = answer(scope=say.cast.scope_a, question="What CI do we use?", now=NOW).text
    assert "GitHub Actions" in now and "Jenkins" not in now
    before = answer(scope=say.cast.scope_a, question="What CI did we have before the migration?", now=NOW).text
    assert "Jenkins" in before and "GitHub Actions" not in before
    named = answer(scope=say.cast.scope_a, question="What CI did we have before GitHub Actions?", now=NOW).text
    assert "Jenkins" in named  # the later value named by the question may be said back


@pytest.mark.django_db
def test_a_question_in_the_past_tense_keeps_the_old_values_quoted(say):
    say("maya", "design reviews are moving from Whimsical to Figjam, Whimsical was only ever a trial", "2025-04-07")
    reply = answer(scope=say.cast.scope_a, question="Which whiteboard tool did we only trial?", now=NOW).text
    assert "Whimsical" in reply
