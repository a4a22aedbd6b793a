"""The offline extractor on a table of English statements, with a fixed "said at" time."""

import random
from datetime import UTC, date, datetime

import pytest

from memories.extraction.offline import MAX_FACTS, extract

SAID_AT = datetime(2024, 6, 15, 10, 0, tzinfo=UTC)  # a Saturday


def facts_of(text: str, speaker: str = "ankesh", at: datetime = SAID_AT) -> set[tuple]:
    return {(f.subject, f.attribute, f.value, f.negated) for f in extract(text=text, speaker=speaker, occurred_at=at).facts}


def only_fact(text: str, speaker: str = "ankesh"):
    facts = extract(text=text, speaker=speaker, occurred_at=SAID_AT).facts
    assert len(facts) == 1, [f.model_dump() for f in facts]
    return facts[0]


# --- the acceptance scenario, exactly -------------------------------------------------------


def test_i_love_playing_football_is_a_like_of_football():
    extraction = extract(text="I love playing football", speaker="ankesh", occurred_at=SAID_AT)
    assert [(f.subject, f.attribute, f.value, f.negated) for f in extraction.facts] == [("ankesh", "likes", "football", False)]
    fact = extraction.facts[0]
    assert fact.sentence == "ankesh likes football."
    assert fact.object_entity is None and fact.valid_from is None
    assert 0.3 <= fact.importance < 0.75
    assert [(e.name, e.kind, e.role) for e in extraction.entities] == [("ankesh", "person", "actor")]


def test_starting_a_job_gives_employer_role_and_city():
    extraction = extract(text="I just started at Google as a software engineer in San Francisco", speaker="ankesh", occurred_at=SAID_AT)
    by_attribute = {f.attribute: f for f in extraction.facts}
    assert set(by_attribute) == {"works_at", "role", "lives_in"}
    assert (by_attribute["works_at"].value, by_attribute["works_at"].object_entity, by_attribute["works_at"].object_kind) == (
        "Google",
        "Google",
        "organization",
    )
    assert by_attribute["role"].value == "software engineer" and by_attribute["role"].object_entity is None
    assert (by_attribute["lives_in"].value, by_attribute["lives_in"].object_kind) == ("San Francisco", "place")
    assert by_attribute["works_at"].sentence == "ankesh works at Google."
    assert by_attribute["role"].sentence == "ankesh is a software engineer."
    assert all(f.importance >= 0.75 for f in extraction.facts) and extraction.importance >= 0.75
    entities = {(e.name, e.kind, e.role) for e in extraction.entities}
    assert entities == {("ankesh", "person", "actor"), ("Google", "organization", "object"), ("San Francisco", "place", "location")}


def test_a_promotion_gives_the_new_role_and_the_employer():
    assert facts_of("I got promoted to senior engineer at Google") == {
        ("ankesh", "role", "senior engineer", False),
        ("ankesh", "works_at", "Google", False),
    }


def test_moving_from_one_city_to_another_keeps_the_previous_city():
    extraction = extract(text="I moved from San Francisco to New York", speaker="ankesh", occurred_at=SAID_AT)
    (fact,) = extraction.facts
    assert (fact.subject, fact.attribute, fact.value, fact.previous_value, fact.negated) == ("ankesh", "lives_in", "New York", "San Francisco", False)
    assert fact.sentence == "ankesh lives in New York."
    assert fact.importance >= 0.75
    assert {e.name for e in extraction.entities} == {"ankesh", "New York", "San Francisco"}


# --- the patterns ---------------------------------------------------------------------------

TABLE = [
    # living and moving, first and third person
    ("I live in Lisbon.", {("ankesh", "lives_in", "Lisbon", False)}),
    ("Caroline lives in Boston.", {("Caroline", "lives_in", "Boston", False)}),
    ("Emma moved to Toronto.", {("Emma", "lives_in", "Toronto", False)}),
    ("We relocated to Austin.", {("ankesh", "lives_in", "Austin", False)}),
    ("I used to live in Tokyo.", {("ankesh", "lived_in", "Tokyo", False)}),
    ("I moved out of London.", {("ankesh", "lives_in", "London", True)}),
    # working, roles
    ("I work at Stripe as a data engineer.", {("ankesh", "works_at", "Stripe", False), ("ankesh", "role", "data engineer", False)}),
    ("I'm a nurse at St. Mary's Hospital.", {("ankesh", "role", "nurse", False), ("ankesh", "works_at", "St. Mary's Hospital", False)}),
    ("John is a teacher at Lincoln High.", {("John", "role", "teacher", False), ("John", "works_at", "Lincoln High", False)}),
    ("I joined Microsoft as a product manager.", {("ankesh", "works_at", "Microsoft", False), ("ankesh", "role", "product manager", False)}),
    ("I got a new job at Spotify as a data scientist.", {("ankesh", "works_at", "Spotify", False), ("ankesh", "role", "data scientist", False)}),
    ("I left Google and joined Anthropic.", {("ankesh", "works_at", "Google", True), ("ankesh", "works_at", "Anthropic", False)}),
    ("I study computer science at MIT.", {("ankesh", "studies", "computer science", False), ("ankesh", "studies_at", "MIT", False)}),
    # likes and dislikes
    ("I enjoy hiking and photography.", {("ankesh", "likes", "hiking", False), ("ankesh", "likes", "photography", False)}),
    ("I hate waking up early.", {("ankesh", "dislikes", "waking up early", False)}),
    ("I'm a big fan of jazz.", {("ankesh", "likes", "jazz", False)}),
    ("I love to cook.", {("ankesh", "likes", "cooking", False)}),
    ("I don't like coffee.", {("ankesh", "dislikes", "coffee", False)}),
    ("Melanie loves painting.", {("Melanie", "likes", "painting", False)}),
    # family and pets
    ("I have a dog named Rex.", {("ankesh", "has_pet", "Rex", False)}),
    ("We adopted two cats named Luna and Milo.", {("ankesh", "has_pet", "Luna", False), ("ankesh", "has_pet", "Milo", False)}),
    ("My dog's name is Biscuit.", {("ankesh", "has_pet", "Biscuit", False)}),
    ("My sister Anna lives in Berlin.", {("ankesh", "has_sister", "Anna", False), ("Anna", "lives_in", "Berlin", False)}),
    ("My wife is Maria.", {("ankesh", "spouse", "Maria", False)}),
    ("I have a brother named Tom.", {("ankesh", "has_brother", "Tom", False)}),
    ("I have two kids.", {("ankesh", "number_of_children", "2", False)}),
    # my X is Y, and other details
    ("My favorite color is blue.", {("ankesh", "favorite_color", "blue", False)}),
    ("My email is ankesh@example.com.", {("ankesh", "email", "ankesh@example.com", False)}),
    ("I'm from Sweden.", {("ankesh", "is_from", "Sweden", False)}),
    ("I speak English and Hindi.", {("ankesh", "speaks", "English", False), ("ankesh", "speaks", "Hindi", False)}),
    # negation
    ("I no longer work at Google.", {("ankesh", "works_at", "Google", True)}),
    ("I don't live in Paris anymore.", {("ankesh", "lives_in", "Paris", True)}),
    ("I'm no longer a manager.", {("ankesh", "role", "manager", True)}),
    ("I no longer like coffee.", {("ankesh", "likes", "coffee", True)}),
    ("I don't have a dog anymore.", {("ankesh", "has_pet", "dog", True)}),
    # lowercase chat
    ("i live in new york and work at google", {("ankesh", "lives_in", "new york", False), ("ankesh", "works_at", "google", False)}),
]


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=[t for t, _ in TABLE])
def test_statement_gives_exactly_these_facts(text, expected):
    assert facts_of(text) == expected


CHIT_CHAT = [
    # From LOCOMO turns: a noun "love", and a contraction opening the clause, are not tastes.
    "Glad you have support, Caroline! Unconditional love is so important.",
    "Here's one- 'Embracing Identity' is all about finding comfort and love in being yourself.",
    "Hey Mel! Good to see you! How have you been?",
    "Thanks, Caroline! I love that you're doing this. It's so inspiring.",
    "Wow, that's amazing! I'm so happy for you. What did you paint?",
    "Do you live in Paris?",
    "Where do you work these days?",
    "I'd love to live in Paris someday.",
    "I'm thinking about moving to Seattle.",
    "I hope to move to Lisbon next year.",
    "If I lived in Paris I would eat croissants daily.",
    "I love you!",
    "I like how you think.",
    "I love it when you say that.",
    "Honestly I really like the new design.",
    "lol yeah same",
    "",
    "   ",
    "!!!???",
]


@pytest.mark.parametrize("text", CHIT_CHAT)
def test_small_talk_questions_and_plans_give_no_facts(text):
    extraction = extract(text=text, speaker="mel", occurred_at=SAID_AT)
    assert extraction.facts == [] and extraction.entities == []
    assert extraction.importance <= 0.2


# --- dates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "valid_from", "occurred"),
    [
        ("I moved to Berlin in March 2024.", date(2024, 3, 1), date(2024, 3, 1)),
        ("Last week I adopted a dog named Rex.", date(2024, 6, 8), date(2024, 6, 8)),
        ("Yesterday I got promoted to staff engineer.", date(2024, 6, 14), date(2024, 6, 14)),
        ("On 3 May 2023 I joined Microsoft.", date(2023, 5, 3), date(2023, 5, 3)),
        ("I've worked at Stripe since 2019.", date(2019, 1, 1), None),  # when a state began, not an event
        ("I have been living in Denver since March 2015.", date(2015, 3, 1), None),
        ("I've lived in Chicago for 5 years.", date(2019, 6, 15), None),
        ("Two weeks ago I moved to Oslo.", date(2024, 6, 1), date(2024, 6, 1)),
        ("I moved to Madrid in January.", date(2024, 1, 1), date(2024, 1, 1)),
        ("I went to Japan last summer.", date(2023, 6, 1), date(2023, 6, 1)),
        ("I moved to Rome on 2024-02-10.", date(2024, 2, 10), date(2024, 2, 10)),
    ],
)
def test_dates_resolve_against_the_time_it_was_said(text, valid_from, occurred):
    extraction = extract(text=text, speaker="ankesh", occurred_at=SAID_AT)
    assert extraction.facts, text
    for fact in extraction.facts:
        assert fact.valid_from is not None and fact.valid_from.date() == valid_from, (text, fact.valid_from)
        assert fact.valid_from.tzinfo is not None
    assert (extraction.occurred_at.date() if extraction.occurred_at else None) == occurred
    # the date phrase is not left in the values
    assert not any("March" in f.value or "week" in f.value or "since" in f.value for f in extraction.facts)


def test_a_statement_without_a_date_leaves_validity_and_time_to_the_episode():
    extraction = extract(text="I live in Lisbon.", speaker="ankesh", occurred_at=SAID_AT)
    assert extraction.occurred_at is None and extraction.facts[0].valid_from is None


def test_a_birth_year_becomes_a_birth_date():
    assert facts_of("I was born in 1990.") == {("ankesh", "birth_date", "1990-01-01", False)}
    assert facts_of("I was born in Chennai.") == {("ankesh", "born_in", "Chennai", False)}


# --- subjects, entities, importance ---------------------------------------------------------


def test_she_and_he_refer_to_the_last_person_named():
    assert facts_of("Melanie works at the library as a librarian. She loves painting.") == {
        ("Melanie", "role", "librarian", False),
        ("Melanie", "likes", "painting", False),
    }
    assert facts_of("He works at Google.") == set()  # nobody to refer to


def test_without_a_speaker_the_first_person_is_user():
    assert facts_of("I live in Lisbon.", speaker="") == {("user", "lives_in", "Lisbon", False)}


def test_a_naive_time_is_taken_as_utc():
    extraction = extract(text="Yesterday I moved to Oslo.", speaker="ankesh", occurred_at=datetime(2024, 6, 15, 10, 0))
    assert extraction.occurred_at == datetime(2024, 6, 14, tzinfo=UTC)


def test_every_subject_and_object_is_an_entity_with_its_kind():
    extraction = extract(text="My brother Tom works at Netflix. I have a cat named Miso.", speaker="ankesh", occurred_at=SAID_AT)
    entities = {e.name: (e.kind, e.role) for e in extraction.entities}
    assert entities == {
        "ankesh": ("person", "actor"),
        "Tom": ("person", "actor"),
        "Netflix": ("organization", "object"),
        "Miso": ("other", "object"),
    }


def test_life_events_rank_above_preferences():
    moving = only_fact("I moved to Oslo.")
    family = only_fact("My wife is Maria.")
    liking = only_fact("I love jazz.")
    assert moving.importance >= 0.75 and family.importance >= 0.75
    assert liking.importance < 0.75


def test_each_fact_is_one_atomic_sentence():
    for fact in extract(text="I just started at Google as a software engineer in San Francisco", speaker="ankesh", occurred_at=SAID_AT).facts:
        assert fact.sentence.count(".") == 1 and fact.sentence.endswith(".")
        assert fact.sentence.startswith("ankesh ")


# --- robustness -----------------------------------------------------------------------------

LOCOMO_LIKE = [
    "Hey Caroline! Long time no see.",
    "I've been super busy with work lately, but I finally took a vacation to Hawaii with my family last month.",
    "We went snorkeling and saw sea turtles! How about you, what have you been up to?",
    "Oh wow, that sounds incredible!!! I've been painting a lot, it's a landscape of the lake near my house.",
    "That's so cool, I love that for you. What did you guys do there?",
    "lol yeah " * 20,
    "I I I I I we we my my my is is " * 30,
]


def test_a_long_conversation_gives_few_reasonable_facts_quickly():
    rng = random.Random(7)
    text = " ".join(rng.choice(LOCOMO_LIKE) for _ in range(400))[: 32 * 1024]
    started = datetime.now()
    extraction = extract(text=text, speaker="mel", occurred_at=SAID_AT)
    assert (datetime.now() - started).total_seconds() < 5
    assert len(extraction.facts) <= MAX_FACTS
    assert {(f.attribute, f.value) for f in extraction.facts} <= {("visited", "Hawaii")}


def test_garbage_never_raises():
    rng = random.Random(11)
    alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ .,!?;:'\"-()\n0123456789éü漢😀"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        extract(text=text, speaker="x", occurred_at=SAID_AT)
    for text in ["I moved from to", "I love", "my is", "I am a", "I work at", "My sister", "I moved to the", "since 2019", "I " * 2000]:
        extraction = extract(text=text, speaker="x", occurred_at=SAID_AT)
        assert extraction.facts == [], text
