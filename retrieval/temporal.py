"""Temporal phrases in a question become a time window on `occurred_at` (facts: their validity).

A thin layer of patterns handles what people say to a memory ("last 3 months", "in 2024",
"March 2025", "yesterday", "since last summer", "last week", "this year", "before I moved");
dateparser's search finds explicit dates the patterns do not know ("on 8 May 2023", "2024-03-05").
Windows are half-open [start, end); either side may be open. Seasons are meteorological,
northern hemisphere (summer = June to August). "before I moved" is an anchor the caller resolves
against the memory (the start of the current home), or ignores when nothing moved.
"""

import calendar
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3,
}
UNIT = r"(day|week|month|year)s?"


@dataclass(frozen=True)
class TimeWindow:
    start: datetime | None
    end: datetime | None
    phrase: str
    anchor: str = ""  # "moved": relative to the last change of home, resolved by the caller

    def as_dict(self) -> dict:
        return {
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "phrase": self.phrase,
        }

    def contains(self, moment: datetime | None) -> bool:
        if moment is None:
            return False
        return (self.start is None or moment >= self.start) and (self.end is None or moment < self.end)

    def overlaps(self, start: datetime | None, end: datetime | None) -> bool:
        """Does [start, end) (open sides allowed) overlap the window?"""
        return (self.end is None or start is None or start < self.end) and (self.start is None or end is None or end > self.start)


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, tz) -> datetime:
    return datetime(year, month, 1, tzinfo=tz)


def _add_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def _month_window(year: int, month: int, tz) -> tuple[datetime, datetime]:
    start = _month_start(year, month, tz)
    return start, _add_months(start, 1)


def _season_window(season: str, year: int, tz) -> tuple[datetime, datetime]:
    start = _month_start(year, SEASONS[season], tz)
    return start, _add_months(start, 3)


def _number(text: str) -> int:
    text = text.strip().lower()
    return int(text) if text.isdigit() else NUMBERS.get(text, 1)


def _ago(now: datetime, count: int, unit: str) -> datetime:
    if unit == "day":
        return now - timedelta(days=count)
    if unit == "week":
        return now - timedelta(weeks=count)
    if unit == "month":
        return _add_months(now, -count)
    return _add_months(now, -12 * count)


_MONTH_NAMES = "|".join(sorted((m for m in MONTHS if m != "may"), key=len, reverse=True))
_NUM_WORDS = "|".join(sorted(NUMBERS, key=len, reverse=True))
_FULL_MONTHS = "|".join(name for name in calendar.month_name if name and name != "May")

# The part of a period said before it: early (its first third), mid (the middle one), late (the last).
_PART = r"(?:in |during |by |of )?(?:the )?(early|earlier in|beginning of|start of|mid|middle of|late|later in|end of)[ -](?:of )?"
_PARTS = {"early": 0, "earlier in": 0, "beginning of": 0, "start of": 0, "mid": 1, "middle of": 1, "late": 2, "later in": 2, "end of": 2}


def _part(start: datetime, end: datetime, word: str) -> tuple[datetime, datetime]:
    """The first, middle or last third of [start, end): "early 2025" is January to April, "late
    March 2025" from the 21st (thirds of a year are whole months)."""
    third = _PARTS[" ".join(word.lower().split())]
    months = (end.year * 12 + end.month) - (start.year * 12 + start.month)
    if months >= 3 and months % 3 == 0:
        step = months // 3
        return _add_months(start, step * third), _add_months(start, step * (third + 1))
    span = (end - start) / 3
    return _day(start + span * third), (_day(start + span * (third + 1)) if third < 2 else end)


# Expressions that name a period; each returns (start, end) for a `now`.
_PERIOD_PATTERNS: list[tuple[re.Pattern, str]] = [
    (re.compile(rf"\b({_MONTH_NAMES}|may)\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.I), "month_day_year"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MONTH_NAMES}|may)\.?,? (\d{{4}})\b", re.I), "day_month_year"),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), "iso_date"),
    (re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b"), "us_date"),
    (re.compile(rf"\b(\d+|{_NUM_WORDS}) {UNIT} ago\b", re.I), "ago"),
    (re.compile(rf"\b(?:in |during |over |within )?the (?:last|past) (\d+|{_NUM_WORDS}) {UNIT}\b", re.I), "last_n"),
    (re.compile(rf"\b(?:last|past) (\d+|{_NUM_WORDS}) {UNIT}\b", re.I), "last_n"),
    (re.compile(r"\b(?:in |during |over )?the (?:last|past) (day|week|month|year)\b", re.I), "past_unit"),
    (re.compile(r"\b(yesterday|today|tonight|this morning)\b", re.I), "day"),
    (re.compile(r"\b(last|this|next) (week|month|year)\b", re.I), "calendar"),
    # A bare season ("plans for the summer") may be ahead: only "last/this summer" or "summer (of) 2024".
    (re.compile(r"\b(last|this) (spring|summer|autumn|fall|winter)\b()", re.I), "season"),
    (re.compile(r"\b()(spring|summer|autumn|fall|winter),? (?:of )?(\d{4})\b", re.I), "season"),
    # "early 2025", "the end of March 2025", "mid-2024": a part of the period, not the whole (read
    # as the whole year, "early 2025" asked as the memory stood at the end of December).
    (re.compile(rf"\b{_PART}({_MONTH_NAMES}|may)\.? (?:of )?(\d{{4}})\b", re.I), "part_month_year"),
    (re.compile(rf"\b{_PART}((?:19|20)\d{{2}})\b", re.I), "part_year"),
    (re.compile(rf"\b({_MONTH_NAMES}|may)\.? (?:of )?(\d{{4}})\b", re.I), "month_year"),
    (re.compile(rf"\b(?:in|during|since|before|after|until|of) (?:early |late |mid-?)?({_MONTH_NAMES}|may)\b(?! \d)", re.I), "month"),
    # A month named alone must look like one: its full name, capitalised ("what happened in
    # the pride march", "what did Jan say", "the dec party" name no month).
    (re.compile(rf"\b({_FULL_MONTHS})\b(?! \d)"), "month"),
    (re.compile(r"\b(?:in |during |of )?((?:19|20)\d{2})\b", re.I), "year"),
]
_RELATION = re.compile(r"\b(since|after|before|until|till)\s+$", re.I)
_LEADING_RELATION = re.compile(r"^(since|after|before|until|till)\s", re.I)
_MOVED = re.compile(r"\b(before|after|since) (?:i|we|he|she|they) (?:moved|relocated)\b|\b(before|after|since) moving\b", re.I)


def _period(kind: str, match: re.Match, now: datetime) -> tuple[datetime | None, datetime | None]:
    tz = now.tzinfo or UTC
    if kind == "month_day_year":
        start = datetime(int(match.group(3)), MONTHS[match.group(1).lower().rstrip(".")], int(match.group(2)), tzinfo=tz)
        return start, start + timedelta(days=1)
    if kind == "day_month_year":
        start = datetime(int(match.group(3)), MONTHS[match.group(2).lower().rstrip(".")], int(match.group(1)), tzinfo=tz)
        return start, start + timedelta(days=1)
    if kind == "iso_date":
        start = datetime(int(match.group(1)), int(match.group(2)), int(match.group(3)), tzinfo=tz)
        return start, start + timedelta(days=1)
    if kind == "us_date":  # month/day/year, as English-speaking users of this default write it
        start = datetime(int(match.group(3)), int(match.group(1)), int(match.group(2)), tzinfo=tz)
        return start, start + timedelta(days=1)
    if kind == "ago":
        # "3 months ago": the unit-long stretch around that moment.
        count, unit = _number(match.group(1)), match.group(2).lower()
        centre = _ago(now, count, unit)
        half = (now - _ago(now, 1, unit)) / 2
        return centre - half, centre + half
    if kind == "last_n":
        return _ago(now, _number(match.group(1)), match.group(2).lower()), now
    if kind == "past_unit":
        return _ago(now, 1, match.group(1).lower()), now
    if kind == "day":
        word = match.group(1).lower()
        today = _day(now)
        if word == "yesterday":
            return today - timedelta(days=1), today
        return today, today + timedelta(days=1)
    if kind == "calendar":
        which, unit = match.group(1).lower(), match.group(2).lower()
        shift = {"last": -1, "this": 0, "next": 1}[which]
        if unit == "week":
            start = _day(now) - timedelta(days=now.weekday()) + timedelta(weeks=shift)
            return start, start + timedelta(weeks=1)
        if unit == "month":
            start = _add_months(_month_start(now.year, now.month, tz), shift)
            return start, _add_months(start, 1)
        start = datetime(now.year + shift, 1, 1, tzinfo=tz)
        return start, datetime(now.year + shift + 1, 1, 1, tzinfo=tz)
    if kind == "season":
        which, season, year = (match.group(1) or "").lower(), match.group(2).lower(), match.group(3)
        if year:
            return _season_window(season, int(year), tz)
        this_start, this_end = _season_window(season, now.year, tz)
        if season == "winter" and now.month < 3:  # January and February belong to last December's winter
            this_start, this_end = _season_window(season, now.year - 1, tz)
        if which == "this":
            return this_start, this_end
        # "last summer" (or plain "summer"): the most recent one that has begun; "last" when it is
        # going on now means the one before.
        if this_start > now or (which == "last" and this_end > now):
            return _add_months(this_start, -12), _add_months(this_end, -12)
        return this_start, this_end
    if kind == "part_month_year":
        return _part(*_month_window(int(match.group(3)), MONTHS[match.group(2).lower().rstrip(".")], tz), match.group(1))
    if kind == "part_year":
        year = int(match.group(2))
        return _part(datetime(year, 1, 1, tzinfo=tz), datetime(year + 1, 1, 1, tzinfo=tz), match.group(1))
    if kind == "month_year":
        return _month_window(int(match.group(2)), MONTHS[match.group(1).lower().rstrip(".")], tz)
    if kind == "month":
        month = MONTHS[match.group(1).lower()]
        year = now.year if month <= now.month else now.year - 1  # the most recent such month
        return _month_window(year, month, tz)
    if kind == "year":
        year = int(match.group(1))
        return datetime(year, 1, 1, tzinfo=tz), datetime(year + 1, 1, 1, tzinfo=tz)
    raise ValueError(kind)


def parse_time(text: str, *, now: datetime) -> TimeWindow | None:
    """The time window a question names, or None. `now` anchors relative phrases."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    moved = _MOVED.search(text)
    if moved:
        relation = (moved.group(1) or moved.group(2)).lower()
        return TimeWindow(None, None, moved.group(0), anchor=f"moved:{relation}")
    for pattern, kind in _PERIOD_PATTERNS:
        match = pattern.search(text)
        if not match:
            continue
        start, end = _period(kind, match, now)
        return _with_relation(text, match.start(), match.group(0), start, end, now)
    return _explicit_date(text, now)


def _with_relation(text: str, at: int, phrase: str, start, end, now: datetime) -> TimeWindow:
    """"since X" runs from X to now, "before X" up to X, "after X" from its end."""
    phrase = phrase.strip()
    leading = _LEADING_RELATION.match(phrase)
    relation = leading or _RELATION.search(text[:at])
    if not relation:
        return TimeWindow(start, end, phrase)
    word = relation.group(1).lower()
    if not leading:
        phrase = f"{word} {phrase}"
    if word == "since":
        return TimeWindow(start, None if start is None else max(now, end or now), phrase)
    if word == "after":
        return TimeWindow(end, None, phrase)
    if word == "before":
        return TimeWindow(None, start, phrase)
    return TimeWindow(None, end, phrase)  # until, till


# dateparser reads "may", "second", "now" or "18th" as dates: only phrases with a digit and a
# month name, or a numeric date, count.
_DATEISH = re.compile(rf"(?=.*\d)(?=.*\b(?:{_MONTH_NAMES}|may)\b)|\d{{1,4}}[/.-]\d{{1,2}}[/.-]\d{{1,4}}", re.I)


def _explicit_date(text: str, now: datetime) -> TimeWindow | None:
    """Explicit dates through dateparser; only substrings with a digit count (it reads "may",
    "second" or "now" as dates otherwise)."""
    if not any(c.isdigit() for c in text):
        return None  # nothing it finds could count, and its search costs milliseconds
    from dateparser.search import search_dates

    found = search_dates(
        text, languages=["en"],
        settings={"RELATIVE_BASE": now.replace(tzinfo=None), "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False},
    )
    for phrase, moment in found or []:
        if not _DATEISH.search(phrase):
            continue
        start = _day(moment.replace(tzinfo=now.tzinfo or UTC))
        at = text.find(phrase)
        return _with_relation(text, max(at, 0), phrase, start, start + timedelta(days=1), now)
    return None


def warm_up() -> None:
    """Load dateparser's tables (about 0.1 s, paid by the first text with a digit the patterns
    above do not claim, like "flight 1721")."""
    _explicit_date("flight 1721", datetime.now(UTC))


def resolve_anchor(window: TimeWindow, *, moved_at: datetime | None) -> TimeWindow | None:
    """Turn "before I moved" into a real window once the date of the move is known (else None)."""
    if not window.anchor:
        return window
    if moved_at is None:
        return None
    relation = window.anchor.split(":", 1)[1]
    if relation == "before":
        return replace(window, start=None, end=moved_at, anchor="")
    return replace(window, start=moved_at, end=None, anchor="")


_PAST_STATE = re.compile(r"\b(did|was|were|used to|had|led|owned|lived|worked|reported|ran|held|took|looked after|handled|managed|"
                         r"maintained|headed|used)\b|^\s*(?:who|(?:which|what)\s+\w+)\s+\w+ed\b", re.I)  # "who hosted …", "which bar hosted …"


def as_of_in_question(text: str, *, now: datetime) -> datetime | None:
    """"Where did ada live in August 2026?": a question about a state in the past, at a named
    time, asks as the memory stood then: the end of the named window (before `now`)."""
    if not _PAST_STATE.search(text) or re.search(r"\b(?:since|(?<!look )(?<!looks )(?<!looked )(?<!looking )after|before|until|till)\b", text, re.I):
        return None
    window = parse_time(text, now=now)
    if window is None or window.anchor or window.end is None or window.start is None:
        return None
    return min(window.end, now) - timedelta(microseconds=1)
