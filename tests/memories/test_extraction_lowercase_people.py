"""Chat types its people's names in lowercase while it capitalises its tools ("bastian reports to
noor", "the rota lives in Humanity"): the scope's speakers are names wherever said as a word of their
own (the eighth pass, `clauses.names_capitalised`), so every rule that reads a name by its capital
reads them; a lowercase word that is no speaker, or a speaker's name that is an English word ("may"),
is left as typed, and a chat typed all in lowercase keeps its lowercase places."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline import extract
from memories.extraction.offline.clauses import known_people
from memories.models import Episode, Fact
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

WHEN = datetime(2025, 6, 2, 9, tzinfo=UTC)
PEOPLE = ["noor", "bastian", "mei", "farid", "odile"]


def facts(text, *, speaker="odile", people=PEOPLE):
    return {(f.subject, f.attribute, f.value) for f in extract(text=text, speaker=speaker, occurred_at=WHEN, team="Orbit", people=people).facts}


@pytest.mark.parametrize("text, fact", [
    ("bastian reports to noor", ("Bastian", "reports_to", "Noor")),
    ("from today farid reports to me", ("Farid", "reports_to", "odile")),
    ("i will report to noor from June", ("odile", "reports_to", "Noor")),
    ("mei looks after the invoicing service", ("Mei", "owns", "invoicing service")),
    ("farid will lead the Kiln migration", ("Farid", "leads", "Kiln migration")),
    ("mei lives in Utrecht these days", ("Mei", "lives_in", "Utrecht")),
])
def test_a_speaker_named_in_lowercase_is_read_as_a_name(text, fact):
    assert fact in facts(text)


@pytest.mark.parametrize("text, fact", [
    ("rose reports to mark", ("Rose", "reports_to", "Mark")),
    ("grace lives in Utrecht these days", ("Grace", "lives_in", "Utrecht")),
])
def test_a_speaker_whose_name_is_an_english_word_is_a_name_only_as_a_speaker(text, fact):
    """Names no English vocabulary holds ("bastian") are names in any lowercase chat (`offline.truecase`); a name
    that is an English word is one only because the scope's speakers include it."""
    people = ["rose", "mark", "grace"]
    assert fact in facts(text, people=people)
    assert fact not in facts(text, people=[])  # what the mechanism adds: without the scope's people, nothing


def test_a_chat_typed_all_in_lowercase_keeps_its_lowercase_places():
    assert ("Mei", "lives_in", "utrecht") in facts("mei lives in utrecht these days")


def test_only_speakers_and_no_english_words_become_names():
    assert known_people(["may", "will", "Jo", "noor", "o'neill", "priya.k"]) == {"noor": "Noor", "o'neill": "O'neill"}
    assert not facts("we may move the standup to Mondays", people=PEOPLE + ["may"])
    assert not any(f[0] == "Gustav" for f in facts("gustav reports to noor"))  # no speaker of this scope



@pytest.mark.parametrize("text, as_a_thing", [
    ("Noor moved from Leeds to York", True),
    ("Noor has moved from Leeds to York", True),
    ("Noor's moving from Leeds to York", False),
])
def test_a_speaker_s_name_opening_a_sentence_is_someone_not_a_thing_of_the_team(text, as_a_thing):
    # Capitalised as a sentence opens, a team thing's switch reads the same ("Payroll moved from Leeds to York");
    # a speaker of the scope is someone, and where someone moves is their home.
    assert ("Noor", "lives_in", "York") in facts(text)
    assert not any(f[0] == "Orbit" for f in facts(text))
    if as_a_thing:  # without the scope's people: the thing's reading
        assert ("Orbit", "noor_place", "York") in facts(text, people=[])


def test_a_reply_that_names_its_addressee_first_gives_no_fact_of_the_team():
    # "Dana it's $2,800": Dana is spoken to, not a thing of the team whose "it" is $2,800.
    assert not any(f[0] == "Orbit" for f in facts("Noor it's $2,800, the $2,400 was their first number"))
    assert not any(f[0] == "Orbit" for f in facts("Mei it's 26 with partners, I counted the RSVPs"))
    assert any(f[0] == "Orbit" for f in facts("Mei it's 26 with partners, I counted the RSVPs", people=[]))


@pytest.mark.django_db
def test_the_scope_speakers_are_passed_to_the_extractor(say):
    say("noor", "morning all, the kiln dashboards are up", "2025-03-03")
    say("bastian", "hi, new here", "2025-03-04")
    say("odile", "bastian will report to noor from April", "2025-03-05")
    assert Fact.objects.in_scope(say.cast.scope_a).filter(attribute="reports_to", value="Noor", subject__name__iexact="bastian").exists()


@pytest.mark.django_db
def test_the_scope_speakers_are_read_again_only_where_new_and_never_across_scopes(say, monkeypatch):
    from memories.services import extract as service

    scope, other = say.cast.scope_a, say.cast.scope_b
    say("noor", "morning all", "2025-03-03")
    assert service.scope_speakers(scope) == ["noor"]
    say("bastian", "hi, new here", "2025-03-04")
    assert service.scope_speakers(scope) == ["bastian", "noor"]  # stored since the first read: seen
    assert "noor" not in service.scope_speakers(other)
    # An episode committed late under a lower id is seen when the speakers are read whole again.
    Episode.objects.filter(scope=scope, speaker="bastian").update(speaker="bastiaan")
    assert service.scope_speakers(scope) == ["bastian", "noor"]  # the increment reads only newer ids
    monkeypatch.setattr(service, "SPEAKERS_FRESH", -1)
    assert service.scope_speakers(scope) == ["bastiaan", "noor"]
