"""A correction that sets the new value beside the old one (issue 24, point 2: corrections of any earlier fact, in
chat's own phrasings): "sorry sorry — CROWN. ardagh was the other quote" after "new can supplier from september is
ardagh". The pure reading first (`contrast.contrasted`, through `amend.amended`), what it leaves alone (talk, whole
statements, LOCOMO's friendly replies), then through the memory: the fact superseded and the answer's first line."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline.amend import CORRECTION_AMONG, amended, holds_shape
from memories.extraction.offline.contrast import contrasted
from memories.models import Fact, FactStatus
from retrieval.answer import answer
from tests.locomo_slices import DEV, TUNE, dev_samples
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)


@pytest.mark.parametrize("previous, correction, meant", [
    # the new value shouted, the old one set apart ("… was the other quote")
    ("our new label printer is a brother", "sorry — ZEBRA. brother was the one we sent back",
     "our new label printer is a zebra"),
    # "it's …" with the old value as another thing ("… is the cafe next door")
    ("the leaving do is at the fox and hounds", "it's the red lion, fox and hounds is the pub by the station",
     "the leaving do is at the red lion"),
    # the old value after "not" in the same clause, with an article ("not a 30")
    ("the boiler at flat 2 is a 28 kW", "mo its a 35 kW not a 28, I checked the plate", "the boiler at flat 2 is a 35 kW"),
    ("the quiz team is called the Brainiacs", "her name's not the Brainiacs it's Quizzly Bears, we voted",
     "the quiz team is called the Quizzly Bears"),
    # "make that …": the words the value shares with the statement stay the statement's
    ("we need 30 boxes of a4 for the exam week", "make that 45 boxes of a4, 30 won't cover the mocks", "we need 45 boxes of a4 for the exam week"),
    # "I meant …", "scratch that …, we're staying with …"
    ("staff lunch on friday: the golden wok", "sorry, i meant the lotus garden. golden wok shut down", "staff lunch on friday: the lotus garden"),
    ("from april our bank is monzo", "scratch that about monzo, we're staying with starling", "from april our bank is starling"),
    # the value's word before the old one belongs to it: "level three" for "level two"
    ("the plant room is on level two", "no wait, level THREE. two is the comms room", "the plant room is on level three"),
    # no value said as one: what follows the same word as in the statement ("at the hall" for "at the park")
    ("sports day is friday 3 july at Heath Park", "no wait, sports day is moving indoors at the Leisure Centre, Heath Park flooded",
     "sports day is friday 3 july at Leisure Centre"),
    # "why did I say …" names the old value
    ("wedding's in lisbon next june!!", "PORTO. why did i say lisbon?? it's his hometown", "wedding's in porto next june!!"),
])
def test_a_correction_setting_the_new_value_beside_the_old_is_read(previous, correction, meant):
    assert contrasted(previous, correction) == meant
    assert amended(previous, correction, same_speaker=False, previous_speaker="someone") == meant
    assert holds_shape(previous, correction)


@pytest.mark.parametrize("previous, correction", [
    # no word of correction, and the old value not set apart: talk
    ("the leaving do is at the fox and hounds", "fox and hounds does a great sunday roast"),
    ("our new label printer is a brother", "it's a nice printer, brother makes good ones"),
    # "sorry to hear", "actually" inside talk: no correction
    ("my laptop crashed and I lost all my work", "sorry to hear that, losing work is the worst. It's happened to me"),
    # a whole statement is read on its own ("WordBridge is in Cork")
    ("our new vendor is WordBridge, based in Dublin", "my bad, WordBridge is in Cork, not Dublin"),
    # the old value said twice in the statement: which one is not clear
    ("room 4 for the morning, room 4 again after lunch", "correction: it's room 6. room 4 is the staff room"),
    # the new value is the statement's already
    ("the offsite is in porto, flights via lisbon", "sorry, it's porto. lisbon was only the flight"),
    # "it's" before talk, not a value
    ("adoption sounds awesome", "Thanks so much! It's beautiful! adoption is a big step for us"),
    # a word of correction, but the word shared is talk, not a value ("new", "customer"): another statement's
    ("happy new year, who left a banana in the drawer", "we've renamed the quiet room: it's the willow room now. new sofa"),
    ("the hire van is back at the depot", "sorry, I meant the new van. the depot closes at 6"),
    # a long message is no correction: read on its own
    ("the leaving do is at the fox and hounds", "sorry — it's the red lion. fox and hounds is the pub by the station. " + "more news. " * 40),
])
def test_talk_and_whole_statements_are_not_read_as_a_contrast(previous, correction):
    assert contrasted(previous, correction) is None


def test_no_turn_of_locomo_is_read_as_a_contrast_of_the_turns_before_it():
    # Two friends chatting: each turn against the three before it, as the extractor looks back (7,512 pairs in the five
    # conversations). Their "It's great", "sorry to hear", "Sports are the best" after a turn that said sports are
    # talk; a reading that took them would change their facts.
    read = []
    for path in (DEV, TUNE):
        for sample in dev_samples(path):
            for key, turns in sample["conversation"].items():
                if not key.startswith("session_") or not isinstance(turns, list):
                    continue
                read += [(turns[j]["text"], turn["text"]) for i, turn in enumerate(turns)
                         for j in range(max(0, i - CORRECTION_AMONG), i) if contrasted(turns[j]["text"], turn["text"])]
    assert read == []


@pytest.mark.django_db
def test_through_the_memory_the_contrast_supersedes_the_fact_and_answers(say):
    say("tomas", "new alarm company is ADT from june", "2026-03-02")
    say("sunny", "tomas it's Vector Security. ADT was last year's quote", "2026-03-02")
    values = {f.value.casefold(): f for f in Fact.objects.in_scope(say.cast.scope_a).exclude(status=FactStatus.RETRACTED)}
    assert "vector security" in values and values["vector security"].status == FactStatus.ACTIVE
    assert all(f.status != FactStatus.ACTIVE for v, f in values.items() if v == "adt")
    reply = answer(scope=say.cast.scope_a, question="Which alarm company do we use?", now=datetime(2026, 12, 1, tzinfo=UTC)).text
    first = reply.split("\n")[0]
    assert "vector security" in first.casefold() and "adt" not in first.casefold()


@pytest.mark.django_db
def test_through_the_memory_a_quoted_statement_is_answered_as_corrected(say):
    # No fact holds a skip's size; the answer quotes the statement, as the correction says it should have been.
    say("rhys", "skip at the mill lane job is a four yarder", "2026-05-28")
    say("rhys", "sorry, SIX. four was the quote from the first firm", "2026-05-28")
    reply = answer(scope=say.cast.scope_a, question="What size is the skip at the mill lane job?", now=datetime(2026, 12, 1, tzinfo=UTC)).text
    first = reply.split("\n")[0]
    assert "six" in first.casefold() and "four" not in first.casefold()
