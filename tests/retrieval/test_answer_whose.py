"""Whose relations (stop 48): a daughter held as has_daughter answers "what's the name of X's daughter?"; a question
that names whose wife it asks about is never answered from what another said of his own ("sanjay's wife is Anjali"
for "what is Tom's wife called?"); and in chat typed all in lowercase, the word right after "my cat" that then does
something is the pet's name ("my cat pickle knocked my phone in the bath"). Sentences of our own."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline import extract
from memories.models import Fact
from retrieval.answer import answer
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)

NOW = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.mark.django_db
def test_a_daughter_held_is_the_answer_to_her_name(say):
    say("kasia", "My daughter Zofia has chickenpox so I'm on calls only until lunchtime.", "2025-01-23")
    say("kasia", "My husband Marek just started as a chef at the Swan.", "2025-03-11")
    assert "Zofia" in answer(scope=say.cast.scope_a, question="What's the name of Kasia's daughter?", now=NOW).text.split("\n")[0]


@pytest.mark.django_db
def test_another_persons_wife_is_no_answer_to_whose_wife_is_asked(say):
    say("sanjay", "Just so everyone knows, my wife Anjali is a nurse at Marbury General.", "2025-02-27")
    say("tom", "off to the coast next week with the wife, don't burn the place down", "2025-06-07")
    reply = answer(scope=say.cast.scope_a, question="What is Tom's wife called?", now=NOW).text
    assert not reply.startswith("Anjali")


@pytest.mark.parametrize("text, pet", [
    ("my cat pickle knocked my phone in the bath 😭", "pickle"),
    ("my dog rocket ate a whole tea towel", "rocket"),
    ("my horse biscuit threw a shoe at the show", "biscuit"),
    ("my cat is called pickle", "pickle"),
])
def test_a_pet_named_with_an_english_word_in_lowercase_chat(text, pet):
    facts = extract(text=text, speaker="josh", occurred_at=NOW, team="Orbit").facts
    assert [(f.attribute, f.value) for f in facts] == [("has_pet", pet)]


@pytest.mark.parametrize("text", [
    "my dog barked all night",  # no name said
    "my cat really hates the hoover",
    "My cat really hates the hoover",  # capitalised chat: a name has its capital
])
def test_what_a_pet_does_is_not_its_name(text):
    assert not [f for f in extract(text=text, speaker="josh", occurred_at=NOW, team="Orbit").facts if f.attribute == "has_pet"]


@pytest.mark.django_db
def test_through_the_memory_the_lowercase_pet_is_held(say):
    say("josh", "my cat pickle knocked my phone in the bath, if i dont reply thats why", "2025-11-06")
    assert list(Fact.objects.in_scope(say.cast.scope_a).filter(attribute="has_pet").values_list("value", flat=True)) == ["pickle"]


@pytest.mark.django_db
def test_a_question_about_what_a_relation_does_is_not_answered_by_their_name(say):
    say("priya", "My daughter Priti starts at Hillside Primary in September, so I'll do the early shift.", "2024-05-01")
    reply = answer(scope=say.cast.scope_a, question="Which school is my daughter starting at?", speaker="priya", now=NOW).text
    assert "Hillside" in reply and not reply.startswith("You: has daughter")


@pytest.mark.django_db
def test_what_the_owner_said_of_their_own_pet_answers_over_what_others_said_naming_them(say):
    say("mei", "Oops, typo: the cat is Pixel, not Pixie. She'd be offended.", "2024-01-16")
    say("nadia", "The summer offsite for 2026 is in Ghent, on Mei's home turf, 16 to 18 June.", "2026-06-01")
    reply = answer(scope=say.cast.scope_a, question="What's Mei's cat called?", now=NOW).text
    assert reply.split("\n")[0] == "Pixel"


@pytest.mark.django_db
def test_a_name_shouted_after_an_autocorrect_corrects_the_pet(say):
    say("bea", "my dog biscuit ate a sock last night, kwame pls don't laugh", "2023-01-25")
    say("bea", "BISTO. my dog is called bisto. stupid autocorrect 🙄", "2023-01-25")
    reply = answer(scope=say.cast.scope_a, question="what's bea's dog called?", now=NOW).text
    assert "bisto" in reply.lower() and "biscuit" not in reply.lower()
