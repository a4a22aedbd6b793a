"""An attribute's history as a timeline: which value held from when to when, laid out for the
SVG the entity page draws on the server (templates/pages/_timeline.html).

One row per fact, oldest first, on a shared time axis from the earliest start to now. A fact
without `valid_from` starts at the axis start; an active fact runs to now; a corrected belief
(superseded with an empty interval) is a narrow mark, so it is still seen."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import groupby

from memories.models import Fact, FactStatus, Provenance

WIDTH = 640  # the viewBox; the SVG scales to its container
LABEL = 180  # left column for the value
ROW = 26
PAD = 8
MIN_BAR = 4


@dataclass
class Bar:
    fact: Fact
    y: float
    x: float
    width: float
    css: str  # active | superseded | retracted, plus manual
    label: str
    span: str  # "2024-01-03 → now"

    @property
    def text_y(self) -> float:
        return self.y + ROW / 2 + 4

    @property
    def strike_y(self) -> float:
        return self.y + ROW / 2


@dataclass
class Timeline:
    attribute: str
    bars: list[Bar]
    height: int
    axis_start: str
    axis_end: str
    axis_y: int
    label_width: int = LABEL
    width: int = WIDTH


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment else "always"


def _start(fact: Fact) -> datetime:
    return fact.valid_from or fact.created_at


def timelines(facts, *, now: datetime) -> list[Timeline]:
    """One Timeline per attribute of `facts` (as fact_history orders them: by attribute, then validity)."""
    result = []
    for attribute, group in groupby(sorted(facts, key=lambda f: (f.attribute, _start(f), f.pk)), key=lambda f: f.attribute):
        group = list(group)
        start = min(_start(f) for f in group)
        end = max([now, *(f.valid_to for f in group if f.valid_to)])
        span = max((end - start).total_seconds(), timedelta(days=1).total_seconds())
        scale = (WIDTH - LABEL - PAD) / span

        def x(moment: datetime) -> float:
            return LABEL + (moment - start).total_seconds() * scale

        bars = []
        for row, fact in enumerate(group):
            begin = _start(fact)
            finish = fact.valid_to or now
            left = round(x(begin), 1)
            css = [fact.status]
            if fact.provenance == Provenance.MANUAL:
                css.append("manual")
            bars.append(Bar(
                fact=fact, y=PAD + row * ROW, x=left, width=max(round(x(finish) - left, 1), MIN_BAR), css=" ".join(css),
                label=_short(fact.value), span=f"{_day(fact.valid_from)} → {'now' if fact.status == FactStatus.ACTIVE else _day(fact.valid_to)}",
            ))
        axis_y = PAD + len(group) * ROW + 4
        result.append(Timeline(
            attribute=attribute, bars=bars, height=axis_y + 20, axis_start=_day(start), axis_end=_day(end), axis_y=axis_y,
        ))
    return result


def _short(value: str, limit: int = 24) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
