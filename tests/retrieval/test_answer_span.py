"""An answer is the value, not a quote (issue 24, point 4): when no fact answers but the evidence
does, the answer's first line is the span that answers, then the evidence quoted; a value said as
the old one ("from Jenkins", "not Lisbon") or held only by superseded facts is never the answer."""

from datetime import UTC, datetime

import pytest

from memories.models import Fact, FactStatus
from memories.services.ingest import remember
from retrieval.answer import _current_quoted, answer

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def say(cast, django_capture_on_commit_callbacks):
    cast.team_a.name = "Orbit"
    cast.team_a.save()

    def say(speaker, text, day):
        with django_capture_on_commit_callbacks(execute=True):
            remember(scope=cast.scope_a, text=text, speaker=speaker, actor=cast.p_owner,
                     occurred_at=datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC))

    say.cast = cast
    return say


def lines(say, question):
    return answer(scope=say.cast.scope_a, question=question, now=NOW).text.split("\n")


def test_a_switch_said_as_a_fact_is_answered_with_the_new_value(say):
    say("maya", "We moved our CI from Jenkins to GitHub Actions in January 2025.", "2025-01-20")
    chain = Fact.objects.in_scope(say.cast.scope_a).filter(attribute="ci_tool").order_by("id")
    assert [(f.value, f.status) for f in chain] == [("Jenkins", FactStatus.SUPERSEDED), ("GitHub Actions", FactStatus.ACTIVE)]
    reply = lines(say, "What CI do we use?")
    assert "GitHub Actions" in reply[0] and "Jenkins" not in reply[0]


def test_without_a_fact_the_first_line_is_the_span_then_the_quote(say):
    # Said in a shape no rule reads: only the turn holds it ("every build goes through Buildkite" is read since stop 37).
    say("tomasz", "Heads up: from now on each and every build gets handed to Buildkite for CI.", "2025-03-02")
    assert not Fact.objects.in_scope(say.cast.scope_a).filter(value="Buildkite").exists()
    reply = lines(say, "Which CI tool do builds go through?")
    assert reply[0] == "Buildkite"
    assert reply[1].startswith('tomasz said on 2 March 2025: "Heads up')


def test_the_old_value_in_the_sentence_is_not_the_span(say):
    say("tomasz", "Heads up: the nightly builds left Travis, now it is Drone for CI builds.", "2025-03-02")
    reply = lines(say, "What do the nightly CI builds run on now?")
    assert reply[0] == "Drone"


def test_a_value_held_only_by_superseded_facts_is_not_offered_as_current(say):
    say("maya", "Our CI is Travis.", "2025-01-02")
    say("maya", "Our CI is Drone.", "2025-02-02")
    assert Fact.objects.in_scope(say.cast.scope_a).get(value="Travis").status == FactStatus.SUPERSEDED
    say("tomasz", "Heads up: Travis and the nightly builds are pinned in the wiki.", "2025-03-02")
    reply = lines(say, "What are the nightly builds pinned in?")
    assert reply[0] != "Travis"


def test_a_value_typed_in_lowercase_and_held_only_as_superseded_is_elided_from_the_quote(say):
    say("maya", "We use Lightning Labels for can labels.", "2025-01-02")
    say("wren", "ditched lightning labels — inland label does all our can labels now", "2025-04-01")
    chain = Fact.objects.in_scope(say.cast.scope_a).filter(attribute="can_label_tool").order_by("id")
    assert [(f.value, f.status) for f in chain] == [("Lightning Labels", FactStatus.SUPERSEDED), ("Inland Label", FactStatus.ACTIVE)]
    sentence = "ditched lightning labels — inland label does all our can labels now"
    assert _current_quoted(sentence, span="Inland Label", scope=say.cast.scope_a, gone=set()) == \
        "ditched … — inland label does all our can labels now"
    assert _current_quoted(sentence, span="Inland Label", scope=say.cast.scope_a, gone=set(), past=True) == sentence
