"""A move of house said as under way ("I'm moving to Kendal! found a flat off Stricklandgate", "moving to port ellery
next month, the canal street flat's lease is up") or said without the "I" ("Finally moved to Wainuiomata, bye Stokes
Valley", "Also moving from Bishopston to Stroud") is where the speaker lives (stop 53). Under way, it must name a town
the gazetteer knows or a home beside it, so a move of team, job or tool is none ("I'm moving to the platform team",
"moving to Notion next month"), and a move wished for or weighed is none either. Sentences of our own; each positive
case gave no fact before this change."""

from functools import partial

import pytest

from memories.extraction.offline.clauses import said_without_i
from tests.memories.reading import read

triples = partial(read, speaker="ana", people=("ana", "bogdan"), previous=True)


@pytest.mark.parametrize("text, expected", [
    # under way, with "I", in the present progressive
    ("I'm moving to Kendal! found a flat off Stricklandgate, moving in at the end of Feb", ("ana", "lives_in", "Kendal", None)),
    ("I am moving to Doncaster at the end of the month", ("ana", "lives_in", "Doncaster", None)),
    ("I'm relocating to Leuven, the new flat has a garden", ("ana", "lives_in", "Leuven", None)),
    ("we are moving house from Bishopston to Stroud, so I'll be in Tue to Thu", ("ana", "lives_in", "Stroud", "Bishopston")),
    # said without "I": past and progressive, after an adverb
    ("Finally moved to Wainuiomata, bye Stokes Valley", ("ana", "lives_in", "Wainuiomata", None)),
    ("just moved to Rotherham, still unpacking", ("ana", "lives_in", "Rotherham", None)),
    ("moving to port ellery next month, the canal street flat's lease is up", ("ana", "lives_in", "port Ellery", None)),
    ("Also moving from Bishopston to Stroud with Ciarán", ("ana", "lives_in", "Stroud", "Bishopston")),
    # another person, under way
    ("Bogdan is moving to Leuven in the spring, he's found a flat", ("Bogdan", "lives_in", "Leuven", None)),
])
def test_a_move_of_house_under_way_or_without_i_is_where_they_live(text, expected):
    assert expected in triples(text)


@pytest.mark.parametrize("text", [
    "I'm moving to the platform team next month",
    "moving to Notion next month, the wiki is a mess",
    "moving the docs to Notion next week",
    "I'm thinking of moving to Leeds, rents are cheaper",
    "I might be moving to Kendal if the flat comes through",
    "I'm moving to Leeds maybe, no idea yet",
    "I'm not moving to Kendal after all",
    "hoping to be moving to York next year",
    "I'm moving to marketing in March",
])
def test_a_move_of_team_tool_or_wish_is_no_home(text):
    assert not [t for t in triples(text) if t[1] == "lives_in"]


@pytest.mark.parametrize("phrase, said", [
    ("moved to Leeds", "I moved to Leeds"),
    ("Finally moved to Wainuiomata", "I moved to Wainuiomata"),
    ("moving to port ellery next month", "I am moving to port ellery next month"),
    ("also moving from Bishopston to Stroud", "I am moving from Bishopston to Stroud"),
    ("relocated back to Hull", "I relocated back to Hull"),
    ("moving the docs to Notion", "moving the docs to Notion"),
    ("moved in at the weekend", "moved in at the weekend"),
])
def test_the_i_is_put_back_before_a_move(phrase, said):
    assert said_without_i(phrase) == said
