"""The timeline drawn on the entity page: a bar per fact, on one time axis, styled by status."""

from datetime import UTC, datetime

import pytest

from memories.models import Fact, FactStatus, Provenance
from memories.timeline import MIN_BAR, WIDTH, timelines


def fact(pk, value, start, end=None, status=FactStatus.ACTIVE, provenance=Provenance.EXTRACTED, attribute="lives_in"):
    return Fact(pk=pk, attribute=attribute, value=value, valid_from=start, valid_to=end, status=status, provenance=provenance,
                created_at=start or datetime(2020, 1, 1, tzinfo=UTC))


NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_each_value_holds_from_its_start_to_its_end_on_one_axis():
    sf = fact(1, "San Francisco", datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC), FactStatus.SUPERSEDED)
    ny = fact(2, "New York", datetime(2025, 1, 1, tzinfo=UTC))
    [timeline] = timelines([ny, sf], now=NOW)
    old, new = timeline.bars
    assert (old.fact, new.fact) == (sf, ny)  # oldest first
    assert old.css == "superseded" and new.css == "active"
    assert old.x + old.width == pytest.approx(new.x, abs=0.2)  # one ends where the next begins
    assert new.x + new.width == pytest.approx(WIDTH - 8, abs=0.2)  # the active one runs to now
    assert (timeline.axis_start, timeline.axis_end) == ("2024-01-01", "2026-01-01")
    assert new.span == "2025-01-01 → now" and old.span == "2024-01-01 → 2025-01-01"


def test_a_corrected_belief_is_a_narrow_mark_and_the_correction_is_marked_manual():
    start = datetime(2024, 6, 1, tzinfo=UTC)
    wrong = fact(1, "Oakland", start, start, FactStatus.SUPERSEDED)
    right = fact(2, "Berkeley", start, provenance=Provenance.MANUAL)
    gone = fact(3, "Mars", start, datetime(2025, 1, 1, tzinfo=UTC), FactStatus.RETRACTED)
    [timeline] = timelines([wrong, right, gone], now=NOW)
    by_value = {bar.fact.value: bar for bar in timeline.bars}
    assert by_value["Oakland"].width == MIN_BAR
    assert by_value["Berkeley"].css == "active manual" and by_value["Mars"].css == "retracted"


def test_one_timeline_per_attribute():
    start = datetime(2024, 6, 1, tzinfo=UTC)
    found = timelines([fact(1, "NY", start), fact(2, "Acme", start, attribute="works_at")], now=NOW)
    assert [t.attribute for t in found] == ["lives_in", "works_at"]
