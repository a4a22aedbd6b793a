"""A person's pastimes and past employers as a team's chat says them (issue 24, point 2). Sentences of our own, in
several persons and tenses; none gave a fact before this change.

- A pastime (held as `likes`, the vocabulary's word): "I've taken up bouldering", "started doing jiu-jitsu twice a week",
  "I'm a massive chess nerd", "woodworking is my therapy", "outside work I sing in a choir"; asked as "what does Liesel
  do outside work?", "what's Ayo's hobby?", "what sport did Felix take up?".
- A past employer (`worked_at`): "before NTA I was at TfL" (an acronym), "I used to be at Ordnance Survey before
  this", "I left Booking.com to join Bramble", "Oskar here, ex-Vattenfall", "welcome Felix! he joins us from Hermes".
- What must give neither: work begun ("I started using Notion", "we started onboarding"), an offer taken up, someone
  else's title ("Priya here, ex-BBC" said by another), a thing described ("the ex-Google folks are great")."""

import pytest

from retrieval.intents import attributes_asked
from tests.memories.reading import read
from tests.retrieval.test_answer_span import lines, say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)
PEOPLE = ["felix", "jonah", "oskar", "priya", "ayo"]


def _of(text: str, attribute: str, speaker: str = "maya") -> list[tuple[str, str]]:
    return [(f[0], f[2]) for f in read(text, speaker=speaker, people=PEOPLE) if f[1] == attribute]


@pytest.mark.parametrize("text, pastime", [
    ("I've taken up bouldering! the wall in town is great if anyone wants to come", "bouldering"),
    ("I took up running in lockdown and never stopped", "running"),
    ("I started bouldering, which my physio is not happy about.", "bouldering"),
    ("I've started doing Brazilian jiu-jitsu twice a week, everything hurts", "Brazilian jiu-jitsu"),
    ("I started running again", "running"),
    ("I'm taking up pottery in the new year", "pottery"),
    ("Thanks! I'm a massive chess nerd, challenge me any time", "chess"),
    ("I'm a huge board game geek", "board game"),
    ("weekend project: a walnut side table 🪵 woodworking is my therapy", "woodworking"),
    ("spotted a red kite this morning, birdwatching is my happy place", "birdwatching"),
    ("outside work I sing in a choir, we do a lot of Bach", "sing in a choir"),
    ("in my spare time I restore old bikes", "restore old bikes"),
])
def test_a_pastime_said_by_the_verb_that_starts_it_or_by_what_it_is_to_the_speaker(text, pastime):
    assert _of(text, "likes") == [("maya", pastime)]


@pytest.mark.parametrize("text", [
    "I started using Notion for my notes",  # a gerund with an object: a tool or a chore
    "we started onboarding the new hires",
    "I started at Monzo in March",  # a job
    "I've taken up the offer",
    "I took up the slack while Dev was off",
    "my therapy is at 4 on Thursdays",
    "outside work I am mostly asleep",
])
def test_work_begun_or_an_offer_taken_up_is_no_pastime(text):
    assert _of(text, "likes") == []


@pytest.mark.parametrize("speaker, text, who, org", [
    ("emeka", "before NTA I spent six years at Barclays, so payments is home turf", "emeka", "Barclays"),
    ("deepa", "Before NTA I was at TfL for four years, mostly back office stuff", "deepa", "TfL"),
    ("hiroshi", "I used to be at Ordnance Survey before this, maps all day every day", "hiroshi", "Ordnance Survey"),
    ("chen", "I used to work at Sage before NTA so I've seen worse codebases", "chen", "Sage"),
    ("hugo", "I left Booking.com to join Bramble, so I'm new to logistics.", "hugo", "Booking.com"),
    ("oskar", "hej! Oskar here, ex-Vattenfall. living in Immingham for now", "oskar", "Vattenfall"),
    ("oskar", "I'm ex-BBC", "oskar", "BBC"),
    ("marta", "welcome Felix! 🎉 he joins us from Hermes and will own carrier integrations", "Felix", "Hermes"),
    ("agnes", "Jonah starts on 28 July, he's joining us from Deliveroo", "Jonah", "Deliveroo"),
    ("marta", "Priya joins us from Monzo next week", "Priya", "Monzo"),
    ("marta", "Welcome to the team, Felix! He comes to us from the BBC.", "Felix", "BBC"),
])
def test_a_past_employer_said_before_here_left_for_here_or_worn_as_a_title(speaker, text, who, org):
    assert _of(text, "worked_at", speaker=speaker) == [(who, org)]


@pytest.mark.parametrize("speaker, text", [
    ("marta", "Oskar here, ex-Vattenfall."),  # said by another: not the speaker's past
    ("maya", "the ex-Google folks are great"),
    ("maya", "the new hire came from across town"),
    ("maya", "we left Slack to join the rest of the company on Teams"),
])
def test_a_title_said_of_someone_else_or_a_thing_described_is_no_past_employer(speaker, text):
    assert _of(text, "worked_at", speaker=speaker) == []


@pytest.mark.parametrize("question", [
    "What does Liesel do outside work?", "What does Aiko do for fun?", "What does Ines do in her free time?",
    "What sport did Felix take up in 2025?", "What martial art does Mei do?", "What's Ayo's hobby?",
])
def test_a_question_about_free_time_asks_for_what_someone_likes(question):
    assert "likes" in attributes_asked(question)


@pytest.mark.parametrize("question", ["What does Liesel do for a living?", "Where does Liesel work now?", "What's Liesel's job?"])
def test_a_job_is_not_asked_as_a_pastime(question):
    assert "likes" not in attributes_asked(question)


@pytest.mark.django_db
def test_through_the_memory_a_pastime_and_a_past_employer_answer_their_questions(say):
    say("liesel", "Hi all! I'm Liesel, I live in Kreuzberg.", "2026-02-16")
    say("liesel", "outside work I sing in a choir, we do a lot of Bach, sorry in advance", "2026-02-23")
    say("marta", "welcome Felix! 🎉 he joins us from Hermes and will own carrier integrations", "2024-01-08")
    say("aiko", "fun fact, before Halden I worked at Argos on their stock systems", "2023-03-08")
    assert "choir" in lines(say, "What does Liesel do outside work?")[0]
    first = lines(say, "Where did Felix work before he joined?")[0]
    assert "Hermes" in first and "Argos" not in first


@pytest.mark.django_db
def test_a_taste_asked_of_nobody_is_not_answered_by_someone_s_pastime(say):
    # "going into", "play" are words of taste too; a question that names no one does not ask what Aiko likes
    say("aiko", "I've taken up bouldering! the wall in Milton Keynes is great if anyone wants to come", "2023-10-02")
    say("tomasz", "the Zebra printers are going into Rotterdam next month", "2025-03-03")
    assert "bouldering" not in lines(say, "What brand are the label printers going into Rotterdam?")[0]
    assert "bouldering" in lines(say, "Who likes bouldering?")[0].lower()


@pytest.mark.django_db
def test_a_job_asked_of_nobody_is_not_answered_by_someone_s_job(say):
    # "the Hendry job", "permits to work": a job or a work of the team's, not anyone's occupation or employer
    say("marek", "I'm Marek, I'm a chef at the Swan on weekends", "2024-03-11")
    say("tom", "its not a baxi lewis its an ideal, checked the data plate this morning", "2025-02-04")
    say("rhys", "permits to work are issued through Permio now, no more paper", "2025-05-06")
    for question in ("What make was the boiler at the Hendry job?", "How are permits to work issued now?",
                     "Whose job is the safety boat?"):
        assert "chef" not in lines(say, question)[0], question
    assert "chef" in lines(say, "What's Marek's job?")[0]
    assert "marek" in lines(say, "Who works as a chef?")[0].lower()


@pytest.mark.parametrize("text, who, pet", [
    ("felix starts monday as our new sales rep!! he's from boise and has a dog called moose. be nice", "Felix", "moose"),
    ("i have a dog called moose", "maya", "moose"),
])
def test_a_newcomer_named_then_he_and_a_lowercase_pet_name(text, who, pet):
    # "felix starts monday …": "he" is Felix next; in chat typed all in lowercase, "called moose" names the dog
    assert _of(text, "has_pet") == [(who, pet)]


def test_a_start_said_as_a_time_is_no_pastime():
    # the clause split off "since" no longer says it; the sentence does
    assert _of("It made me reflect on how far I've come since I started transitioning.", "likes") == []
    assert _of("My week's been busy - I started doing seminars, helping people with marketing.", "likes") == [("maya", "seminars")]
