"""Shapes of team chat the offline extractor did not read before stop 42 (issue 24, point 2), in sentences of our
own: a thing named with when it is ("Christmas party", "summer social") said without "the"; a thing's place and day
in one clause; "the X is the <Name>"; someone's job title said with a possessive or as "head of …"; pets named in the
plural; and a message or a reply that corrects itself ("ignore my last message", "not blefa, thielmann",
"… Scratch that, the 3rd")."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline.amend import amended, correction_read
from memories.models import Fact, FactStatus
from tests.memories.reading import read, said_in_team


@pytest.mark.parametrize("text, fact", [
    ("Christmas party is at Havana Bar", ("Orbit", "christmas_party_place", "Havana Bar")),
    ("summer bbq was at Roundhay Park this year", ("Orbit", "summer_bbq_place", "Roundhay Park")),
    ("Monday standup is at 9:30", ("Orbit", "monday_standup_time", "9:30")),
    ("Standup is at 9:30 from next week", ("Orbit", "standup_time", "9:30")),  # was standup_place "9"
    ("the summer social is at Stubbing Wharf", ("Orbit", "summer_social_place", "Stubbing Wharf")),
    ("the repair vessel is the Cable Petrel", ("Orbit", "repair_vessel", "Cable Petrel")),
])
def test_a_team_thing_named_with_when_it_is_or_said_as_the_name(text, fact):
    assert fact in read(text)


@pytest.mark.parametrize("text", [
    "May is in Lisbon",  # a person named May, no thing
    "Spring is here",
    "the kids are the best",
    "the problem is the Wifi",  # one word and no name a thing holds
])
def test_no_thing_is_read_from_what_names_none(text):
    assert [f for f in read(text) if f[0] == "Orbit"] == []


@pytest.mark.parametrize("text, expected", [
    ("the summer social is at the Crown on 4 July", {("Orbit", "summer_social_place", "Crown"), ("Orbit", "summer_social_date", "4 July 2026")}),
    ("The offsite was in Lisbon on 12 June 2025.", {("Orbit", "offsite_place", "Lisbon"), ("Orbit", "offsite_date", "12 June 2025")}),
])
def test_a_thing_s_place_and_day_in_one_clause_are_two_facts(text, expected):
    assert set(read(text)) == expected


@pytest.mark.parametrize("text, role", [
    ("Ffion's title is Director of Operations", ("Ffion", "role", "Director of Operations")),
    ("Correction: Ffion's role is head of ops, not ops manager", ("Ffion", "role", "head of ops")),
    ("ffion is head of ops now", ("Ffion", "role", "head of ops")),
    ("Sofie is our release captain", ("Sofie", "role", "release captain")),
    ("Ffion is now our Director of Finance", ("Ffion", "role", "Director of Finance")),
])
def test_a_job_title_said_of_someone_is_their_role(text, role):
    assert role in read(text, people=("ffion", "sofie"))


def test_the_head_of_a_place_leads_it_and_has_no_title():
    assert read("Ffion is the head of the Leeds office", people=("ffion",)) == [("Ffion", "leads", "Leeds office")]


@pytest.mark.parametrize("text, pets", [
    ("my cats are called Miso and Tofu", [("maya", "has_pet", "Miso"), ("maya", "has_pet", "Tofu")]),
    ("Nadia's dogs are named Rex, Bella and Moss", [("Nadia", "has_pet", "Rex"), ("Nadia", "has_pet", "Bella"), ("Nadia", "has_pet", "Moss")]),
    ("Nadia's dog is called Biscuit", [("Nadia", "has_pet", "Biscuit")]),
])
def test_pets_named_one_or_several_are_each_a_pet(text, pets):
    assert read(text, people=("nadia",)) == pets


@pytest.mark.parametrize("text", ["my cats are great", "Mel's going to Leeds", "Slack's the worst"])
def test_a_possessive_or_a_contraction_that_names_nothing_gives_no_pet_or_role(text):
    assert [f for f in read(text) if f[1] in {"has_pet", "role"}] == []


@pytest.mark.parametrize("previous, correction, meant", [
    ("new kegs are on order from blefa, 200 sixtels", "not blefa, thielmann. blefa was the old batch", "new kegs are on order from thielmann, 200 sixtels"),
    ("lunch is at Loretta, 12.00", "Not Loretta, Floriditas. Loretta was full", "lunch is at Floriditas, 12.00"),
    ("the fire drill is on Thursday at 10am", "ignore my last message, it's Wednesday", "the fire drill is on Wednesday at 10am"),
    ("Team photos are Thursday 25th", "ignore my last message — the photographer can't do it. So it's Wednesday!", "Team photos are Wednesday 25th"),
])
def test_a_correction_that_names_the_wrong_value_first_or_takes_back_the_last_message(previous, correction, meant):
    assert amended(previous, correction) == meant


@pytest.mark.parametrize("text", ["not now, later", "not sure, maybe", "ignore the noise outside, we're fine"])
def test_chat_that_only_looks_like_such_a_correction_is_none(text):
    assert correction_read(text) is None


@pytest.mark.parametrize("text, fact", [
    ("Invoice runs happen on the 1st of each month. Scratch that, the 3rd, finance moved it.", ("Orbit", "invoice_runs", "on the 3rd of each month")),
    ("Our Arc account manager is Jenna. Sorry, Jenny.", ("Orbit", "arc_account_manager", "Jenny")),
    ("We moved to Leeds last year. Sorry, I meant Bradford.", ("maya", "lives_in", "Bradford")),
])
def test_a_message_that_corrects_itself_is_read_as_meant(text, fact):
    assert read(text) == [fact]


def test_a_later_sentence_that_corrects_nothing_is_read_on_its_own():
    assert read("The offsite is in Lisbon. Sorry for the late notice!") == [("Orbit", "offsite_place", "Lisbon")]


@pytest.mark.django_db
def test_a_correction_of_a_christmas_party_s_place_supersedes_it(cast, django_capture_on_commit_callbacks):
    said_in_team(cast, django_capture_on_commit_callbacks, [("Christmas party is at Hummingbird this year", datetime(2025, 11, 3, tzinfo=UTC)),
                                                            ("Correction: Christmas party is at Havana Bar, not Hummingbird", datetime(2025, 11, 4, tzinfo=UTC))])
    held = Fact.objects.in_scope(cast.scope_a).filter(attribute="christmas_party_place").order_by("id")
    assert [f.value for f in held if f.status == FactStatus.ACTIVE] == ["Havana Bar"]
    assert "Hummingbird" in [f.value for f in held if f.status != FactStatus.ACTIVE]


@pytest.mark.parametrize("text, expected", [
    ("This year's hackathon is in Eindhoven.", [("Orbit", "2026_hackathon_place", "Eindhoven")]),
    ("next year's offsite is in Porto", [("Orbit", "2027_offsite_place", "Porto")]),
    ("the 2027 hackathon is on 18 May", [("Orbit", "2027_hackathon_date", "18 May 2027")]),
])
def test_an_event_of_a_year_is_that_year_s_event(text, expected):
    """"this year's" is the year it was said in (`offline._years_named`), and a day said without its year is in the
    year the event is named with."""
    assert read(text) == expected
