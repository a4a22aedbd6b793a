"""Chat drops the "I" of what one says about oneself, mostly when introducing oneself ("Ana, rigging
lead. Porto lass, live in Hexham with my wife", "from Gdynia, did five years at sea before this",
"Living in Alnwick these days"): a phrase that opens with where one lives, lived, grew up or was born is
the speaker's, and so is "from <Name>" said as a phrase of its own (the ninth pass). Not a date ("From
Monday the rota is …"), not a phrase after which the rest of a clause would be read as the speaker's
("live in Hexham, spend my weekends at the crag at Kyloe" says nothing of working at Kyloe), and in a
personal chat only where a phrase is already read alone. Each shape in several tenses and persons, in
sentences of our own; each failed before this change."""

from functools import partial

import pytest

from memories.extraction.offline.clauses import said_without_i
from tests.memories.reading import read

triples = partial(read, speaker="ana", people=("ana", "bogdan"))


@pytest.mark.parametrize("text, expected", [
    ("Ana, rigging lead. Porto lass, live in Hexham with my wife and two cats", ("ana", "lives_in", "Hexham")),
    ("live in Hexham now, the commute is fine", ("ana", "lives_in", "Hexham")),
    ("Living in Alnwick these days with my partner Sam", ("ana", "lives_in", "Alnwick")),
    ("Ana here, from Gdynia, did five years at sea before this", ("ana", "is_from", "Gdynia")),
    ("Originally from Gdynia, came over for work and stayed", ("ana", "is_from", "Gdynia")),
    ("Hi all! Ana, the new planner 👋 grew up in Wakefield, spent years in logistics", ("ana", "grew_up_in", "Wakefield")),
    ("new starter here: born in Lagos, been in Gateshead since 2019", ("ana", "born_in", "Lagos")),
    ("Welsh originally, lived in Cardiff for years before this", ("ana", "lived_in", "Cardiff")),
])
def test_a_phrase_about_where_one_lives_or_comes_from_is_the_speakers(text, expected):
    assert expected in triples(text)


@pytest.mark.parametrize("text", [
    "From Monday the rota is on the whiteboard in the back office",
    "From Monday, the office is closed for the refit",
    "live in the moment, that is my motto",
])
def test_a_date_or_a_saying_is_no_home(text):
    assert not [t for t in triples(text) if t[1] in {"lives_in", "is_from"}]


def test_the_rest_of_the_clause_is_not_read_as_the_speakers():
    facts = triples("live in Hexham, spend my weekends hanging off the crag at Kyloe")
    assert ("ana", "lives_in", "Hexham") in facts
    assert not [t for t in facts if t[2] == "Kyloe"]


@pytest.mark.parametrize("phrase, said", [
    ("live in Hexham", "I live in Hexham"),
    ("lived in Cardiff for years", "I lived in Cardiff for years"),
    ("living in Alnwick", "I am living in Alnwick"),
    ("based in Leeds", "I am based in Leeds"),
    ("born and raised in Hull", "I was born and raised in Hull"),
    ("from Gdynia", "I am from Gdynia"),
    ("originally from Gdynia", "I am originally from Gdynia"),
    ("from Friday", "from Friday"),
    ("from the Leeds office", "from the Leeds office"),
    ("from Gdynia to Hull by ferry", "from Gdynia to Hull by ferry"),
    ("move to Xero", "move to Xero"),
])
def test_the_i_put_back(phrase, said):
    assert said_without_i(phrase) == said
