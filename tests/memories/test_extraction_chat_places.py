"""Where a team keeps a thing, said in chat's own shape (issue 24, point 2; `offline.moves`): "lockers have moved
to the old boiler room", "moved the pilot kit over to old mill quay", "hops are kept in the cold room now". A place
says it is one by a place noun or a known town; a thing is no person, pronoun, time or function. Sentences of our
own; each gave no fact before this change."""

from datetime import UTC, datetime

import pytest

from memories.models import Fact, FactStatus
from tests.memories.reading import read, said_in_team


@pytest.mark.parametrize("text, fact", [
    ("lockers have moved to the old boiler room, the hallway ones are gone", ("Orbit", "lockers_place", "old boiler room", None)),
    ("the admin office has moved to the granary building on pell street", ("Orbit", "admin_office_place", "granary building on pell street", None)),
    ("moved the pilot kit over to old mill quay, it's in the back corner", ("Orbit", "pilot_kit_place", "old mill quay", None)),
    ("hops are kept in the cold room now", ("Orbit", "hops_place", "cold room", None)),
    ("the defib is by the front entrance from now on", ("Orbit", "defib_place", "front entrance", None)),
    ("tour meeting point is the taproom bar now instead of the front gate", ("Orbit", "tour_meeting_point_place", "taproom bar", "front gate")),
    ("The defib has moved from reception to the staff corridor.", ("Orbit", "defib_place", "staff corridor", "reception")),
    ("Costume store has moved out of the basement to a unit in St Philips.", ("Orbit", "costume_store_place", "unit in St Philips", "basement")),
])
def test_a_thing_moved_or_kept_somewhere_is_the_team_s_thing_s_place(text, fact):
    assert read(text, previous=True) == [fact]


@pytest.mark.parametrize("text", [
    "lab log has moved to Google Forms, the paper book is retired",  # a name with no place noun: a tool's
    "Limble is our CMMS from today",
    "the drummer moved to Glasgow",  # someone, not a thing
    "i moved to a new flat last week",
    "the meeting moved to tuesday",  # a time
    "the barrels are in fenwick",  # where, not said to be where they live now
    "the lab is moving to unit 9 next month",  # a plan
    "we might move the kegs to the container",
])
def test_what_is_no_thing_s_place_gives_none(text):
    assert [f for f in read(text) if f[1].endswith("_place")] == []


def test_a_personal_chat_reads_no_team_place():
    assert read("hops are kept in the cold room now", team=None) == []


@pytest.mark.django_db
def test_a_thing_moved_again_ends_its_old_place(cast, django_capture_on_commit_callbacks):
    said_in_team(cast, django_capture_on_commit_callbacks, [("the lockers are kept in the hallway by the office", datetime(2025, 3, 3, tzinfo=UTC)),
                                                            ("lockers have moved to the old boiler room", datetime(2025, 6, 9, tzinfo=UTC))])
    held = Fact.objects.in_scope(cast.scope_a).filter(attribute="lockers_place").order_by("id")
    assert [(f.value, f.status) for f in held] == [("hallway by the office", FactStatus.SUPERSEDED), ("old boiler room", FactStatus.ACTIVE)]
