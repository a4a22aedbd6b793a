"""A correction chat says without its comma (issue 24, point 2; `subjects.correction_taken`): "it's mosaic not
citra", "ugh it's MARCUS not martin", "correction: the offsite is in porto not lisbon". Read so only when the clause
says "it's" or the sentence is a correction: "we're not on slack" and "it's not ready" correct nothing."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline import extract
from memories.models import Fact, FactStatus
from tests.memories.reading import said_in_team


def corrections(text: str) -> list[tuple]:
    facts = extract(text=text, speaker="rosa", occurred_at=datetime(2026, 1, 6, tzinfo=UTC), team="Orbit").facts
    return [(f.value, f.corrects) for f in facts]


@pytest.mark.parametrize("text, right, wrong", [
    ("it's mosaic not citra", "mosaic", "Citra"),
    ("correction on fogbank: it's mosaic not citra. i was reading last year's sheet", "mosaic", "Citra"),
    ("Correction on Fogbank: it is Mosaic not Citra.", "Mosaic", "Citra"),
    ("ugh it's MARCUS not martin", "MARCUS", "martin"),
    ("correction: the offsite is in porto not lisbon", "porto", "lisbon"),
])
def test_a_correction_without_its_comma_names_the_wrong_value(text, right, wrong):
    assert corrections(text) == [(right, wrong)]


@pytest.mark.parametrize("text", ["we're not on slack", "it's not ready", "it's not that bad", "that's not me"])
def test_a_plain_not_corrects_nothing(text):
    assert [c for c in corrections(text) if c[1]] == []


@pytest.mark.django_db
def test_the_reply_corrects_the_fact_it_names(cast, django_capture_on_commit_callbacks):
    said_in_team(cast, django_capture_on_commit_callbacks, [("our rep at northway is martin btw, lovely guy", datetime(2025, 12, 18, tzinfo=UTC)),
                                                            ("ugh it's MARCUS not martin", datetime(2025, 12, 20, tzinfo=UTC))], speaker="rosa")
    held = Fact.objects.in_scope(cast.scope_a).filter(attribute="rep_at_northway").order_by("id")
    assert [(f.value.lower(), f.status == FactStatus.ACTIVE) for f in held] == [("martin", False), ("marcus", True)]
