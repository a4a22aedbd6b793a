"""Date phrases in a clause ("in March 2024", "last week", "since 2019"), resolved against when
the text was said; dateparser reads the explicit ones."""

import calendar
import re
from datetime import datetime, time, timedelta

from memories.extraction.offline.context import Context
from memories.extraction.offline.words import NUMBER_WORDS, WEEKDAYS

MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WEEKDAYS = "|".join(WEEKDAYS)
_NUM = r"(?:\d+|a couple of|couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?:days?|weeks?|months?|years?)"

# A year said in digits ("the 2026 hackathon", "founded in 2016").
YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def day_said(day: datetime) -> str:
    """A day as facts and answers write it: "12 May 2026"."""
    return f"{day.day} {calendar.month_name[day.month]} {day.year}"


# "this year", "next year's": a year named by how far it is from the year it was said in
YEARS_AWAY = {"this": 0, "next": 1, "last": -1}


def year_named(word: str, said_in: int) -> int:
    """The year that "this / next / last year" names, said in `said_in`."""
    return said_in + YEARS_AWAY[word.lower()]


# Date phrases, most specific first. `since`/`for` phrases say when a state began (valid_from)
# but not when the episode happened; the others say both.
_DATE_PATTERNS: list[tuple[str, re.Pattern]] = [
    # "18 to 20 April", "2-4 December 2025": how long an event lasts, not when the statement's facts began
    ("range", re.compile(rf"\b(?:from\s+|on\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s*(?:to|-|–|until|till)\s*\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTHS})\b\.?(?:,?\s+\d{{4}})?", re.I)),
    ("iso", re.compile(r"\b(?:on\s+|since\s+|in\s+)?(\d{4}-\d{2}-\d{2})\b", re.I)),
    (
        "dmy",
        re.compile(
            rf"\b(?:(since|from)\s+|on\s+|in\s+)?(?:the\s+)?(\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTHS})\.?,?\s+\d{{4}})\b",
            re.I,
        ),
    ),
    ("mdy", re.compile(rf"\b(?:(since|from)\s+|on\s+|in\s+)?((?:{MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})\b", re.I)),
    (
        "month_year",
        re.compile(rf"\b(?:(since|from)\s+|(?:back\s+)?in\s+|during\s+)?((?:early|late|mid-?)\s*)?((?:{MONTHS})\.?,?\s+(?:of\s+)?\d{{4}})\b", re.I),
    ),
    ("year", re.compile(r"\b(since|from|(?:back\s+)?in|during)\s+((?:19|20)\d{2})\b", re.I)),
    # "From 1 July our clinical waste contractor is PHS", "as of March 3rd": a day named without its year, when a
    # state begins (an event's day without "from" is a team thing's date, read by `rules.team.due_date`)
    ("day_from", re.compile(rf"\b(since|from|as of|starting(?:\s+on|\s+from)?|effective(?:\s+from)?)\s+(?:the\s+)?"
                            rf"(\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTHS})|(?:{MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?)\b(?!\.?,?\s+\d)", re.I)),
    # "as of next week we're on Starling", "from next month": the week's or month's first day
    ("next_unit", re.compile(r"\b(as of|from|starting)\s+next\s+(week|month)\b", re.I)),
    ("ago", re.compile(rf"\b({_NUM}\s+{_UNIT}\s+ago)\b", re.I)),
    ("for", re.compile(rf"\bfor\s+(?:the\s+(?:last|past)\s+)?({_NUM}|\d+)\s+({_UNIT})\b", re.I)),
    ("last_unit", re.compile(r"\b(?:(?:as of|from|starting)\s+)?(last|this|past)\s+(week|weekend|month|year|night|morning|evening|afternoon)\b", re.I)),
    ("season", re.compile(r"\b(last|this|in the)\s+(summer|winter|spring|fall|autumn)\b", re.I)),
    ("weekday", re.compile(rf"\b(?:(last|this|on|as of|from|starting|since)\s+)({_WEEKDAYS})\b(?!\s+(?:mornings|afternoons|evenings|nights)\b)", re.I)),
    ("month", re.compile(rf"\b(?:(since|from|as of|starting(?: in)?|effective)\s+|(?:back\s+)?in\s+|last\s+)(?:early\s+|late\s+|mid-?\s*)?({MONTHS})\b(?!\s+\d)", re.I)),
    ("day", re.compile(r"\b(?:(?:as of|from|starting)\s+)?(yesterday|today|tonight|the other day|earlier today)\b", re.I)),
]


def take_dates(text: str, ctx: Context) -> tuple[str, datetime | None]:
    """Remove date phrases from a clause; the first one that resolves is when its facts began."""
    found: datetime | None = None
    present_perfect = bool(re.search(r"\b(?:have|has)\b", text, re.I))
    for kind, pattern in _DATE_PATTERNS:
        while match := pattern.search(text):
            resolved, is_event = _resolve(kind, match, ctx, present_perfect)
            text = (text[: match.start()] + " " + text[match.end() :]).strip()
            text = re.sub(r"\s{2,}", " ", text)
            if resolved is not None and found is None:
                found = resolved
                if is_event and ctx.event_at is None:
                    ctx.event_at = resolved
    text = re.sub(r"\s+([,.!])", r"\1", text).strip(" ,")
    return text, found


def _midnight(day, ctx: Context) -> datetime:
    return datetime.combine(day, time.min, tzinfo=ctx.tz)


def _resolve(kind: str, match: re.Match, ctx: Context, present_perfect: bool) -> tuple[datetime | None, bool]:
    """(when, whether it says when something happened) for one date phrase."""
    now = ctx.occurred_at.astimezone(ctx.tz)
    today = now.date()
    groups = [g for g in match.groups()]
    since = bool(groups and isinstance(groups[0], str) and groups[0].lower().split()[0] in {"since", "from", "as", "starting", "effective"})
    if kind == "range":
        return None, False
    if kind == "iso":
        return _parse(groups[0], ctx), True
    if kind in {"dmy", "mdy"}:
        return _parse(groups[1], ctx), not since
    if kind == "month_year":
        return _parse(re.sub(r"\bof\b", "", groups[2]), ctx), not since
    if kind == "year":
        is_since = groups[0].lower() in {"since", "from"}
        return _midnight(today.replace(year=int(groups[1]), month=1, day=1), ctx), not is_since
    if kind == "day_from":
        day = _parse(groups[1], ctx)
        if day is None:
            return None, False
        # the nearest such day (a change announced ahead of it, or on the days after); "since" one already come
        days = [day.replace(year=day.year + d) for d in (-1, 0, 1) if not (d == 1 and day.month == 2 and day.day == 29)]
        if groups[0].lower() == "since":
            days = [d for d in days if d.date() <= today] or days
        return min(days, key=lambda d: abs((d.date() - today).days)), False
    if kind == "next_unit":
        start = today + timedelta(days=7 - today.weekday()) if groups[1].lower() == "week" else (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        return _midnight(start, ctx), False
    if kind == "ago":
        return _parse(groups[0], ctx), True
    if kind == "for":
        if not present_perfect:  # "I lived in Paris for 3 years" says how long, not when
            return None, False
        amount = int(groups[0]) if groups[0].isdigit() else NUMBER_WORDS.get(groups[0].lower(), 1)
        return _parse(f"{amount} {groups[1]} ago", ctx), False
    if kind == "last_unit":
        which, unit = groups[0].lower(), groups[1].lower()
        if unit in {"night", "morning", "evening", "afternoon"}:
            return _midnight(today - timedelta(days=1 if which == "last" else 0), ctx), True
        if unit == "weekend":
            back = (today.weekday() - 5) % 7 or 7  # the most recent Saturday before today
            return _midnight(today - timedelta(days=back if which == "last" else back % 7), ctx), True
        if which == "this":
            start = {"week": today - timedelta(days=today.weekday()), "month": today.replace(day=1), "year": today.replace(month=1, day=1)}
            return _midnight(start[unit], ctx), True
        return _parse(f"last {unit}", ctx), True
    if kind == "season":
        which, season = groups[0].lower(), groups[1].lower()
        month = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}[season]
        start = today.replace(month=month, day=1)
        if which == "last":
            # "last summer" said in July means the summer before.
            if start > today or (today - start).days < 92:
                start = start.replace(year=start.year - 1)
        elif start > today:
            start = start.replace(year=start.year - 1)
        return _midnight(start, ctx), True
    if kind == "weekday":
        weekday = _WEEKDAYS.split("|").index(groups[1].lower())
        if groups[0].lower() == "since":
            return _midnight(today - timedelta(days=(today.weekday() - weekday) % 7), ctx), False  # "since Monday": the last one, today's too
        if groups[0].lower() in {"as of", "from", "starting"}:
            # "As of Monday we're on Beehiiv": the nearest Monday, said on it, the day before or the days after
            ahead = (weekday - today.weekday()) % 7
            return _midnight(today + timedelta(days=ahead if ahead <= 3 else ahead - 7), ctx), False
        back = (today.weekday() - weekday) % 7 or 7
        return _midnight(today - timedelta(days=back), ctx), True
    if kind == "month":
        month = month_number(groups[1])
        start = today.replace(month=month, day=1)
        if groups[0] and groups[0].lower().split()[0] in {"from", "as", "starting", "effective"}:
            # "as of April I report to Ruben", said on 30 March: the nearest April (here, days away)
            start = min((start.replace(year=start.year + d) for d in (-1, 0, 1)), key=lambda day: abs((day - today).days))
            return _midnight(start, ctx), False
        if start > today:
            start = start.replace(year=start.year - 1)
        return _midnight(start, ctx), not since
    if kind == "day":
        word = groups[0].lower()
        back = 1 if word == "yesterday" else 3 if word == "the other day" else 0
        return _midnight(today - timedelta(days=back), ctx), True
    return None, False


def month_number(name: str) -> int:
    key = name.lower().rstrip(".")[:3]
    return ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].index(key) + 1


def _parse(phrase: str, ctx: Context) -> datetime | None:
    import dateparser  # imported on first use: it costs a few hundred milliseconds

    base = ctx.occurred_at.astimezone(ctx.tz).replace(tzinfo=None)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False}
    if re.search(MONTHS, phrase, re.I) and not re.search(r"\b\d{1,2}(?:st|nd|rd|th)?\b(?!\d)", re.sub(r"\d{4}", "", phrase)):
        settings["PREFER_DAY_OF_MONTH"] = "first"  # "March 2024" is the 1st of March
    parsed = dateparser.parse(phrase, languages=["en"], settings=settings)
    return _midnight(parsed.date(), ctx) if parsed else None
