"""What kind of value a question asks for, and the words of a sentence that are one.

A question's first words say the kind of its answer: "when / on what date / what were the dates"
a date, "where" a place, "who" a person. The answer path uses the kind twice: a fact whose value is
of another kind does not answer ("when did the app ship?" is not answered by the app's framework),
and when no fact answers, the span quoted from the evidence must be of that kind (`date_span`: a
date said in the sentence, a relative one — "next Monday", "yesterday", "since Monday", "on
Thursday night" — resolved against the day the sentence was said).
"""

import calendar
import re
from datetime import datetime, timedelta

from memories.extraction.offline.dates import day_said

_MONTHS = "|".join(sorted((m.lower() for m in list(calendar.month_name)[1:] + list(calendar.month_abbr)[1:] if m), key=len, reverse=True))
_WEEKDAYS = [d.lower() for d in calendar.day_name]
_WEEKDAY = "|".join(_WEEKDAYS)
# A weekday said in any case, one or every ("monday", "Tuesdays"): a value even in chat typed in lowercase.
WEEKDAY_SAID = rf"(?i:(?:{_WEEKDAY})s?\b)"

_ASKS_DATE = re.compile(r"^\s*(?:since\s+when|by\s+when|until\s+when|when\b(?!\s+(?:do|does|is|are)\s+\w+\s+(?:usually|normally)\b)|"
                        r"(?:on\s+|by\s+)?(?:what|which)\b[\w\s'’]*?\bdates?\b|(?:in\s+)?(?:what|which)\s+(?:week|month|year)\b)", re.I)
# ("what was Felix's start date?", "what were the dates of …?", "which week of September …?", "in which month …?"; not "which day":
# a weekday is answered as said)
_ASKS_PLACE = re.compile(r"^\s*(?:where\b|(?:in\s+|on\s+|at\s+)?which\s+(?:city|town|country|venue|room|office|pub|bar|hotel|street|road|building|theatre|car\s+park)\b)", re.I)
_ASKS_PERSON = re.compile(r"^\s*(?:who|whom|whose)(?:'s|\s)", re.I)

# A date said in a sentence, most specific first; each is kept as said except the relative ones.
_SAID_DATES = [
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s*(?:to|-|–|until|till)\s*\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b(?:,?\s+\d{{4}})?", re.I),
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b(?:,?\s+\d{{4}})?", re.I),
    re.compile(rf"\b(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?", re.I),
    re.compile(rf"\b(?:{_MONTHS})\s+\d{{4}}\b", re.I),
]
_RELATIVE = re.compile(rf"\b(?P<which>next|last|this|on|since|from|by|until)?\s*(?P<day>{_WEEKDAY}|yesterday|today|tonight|tomorrow)\b(?!s\b)", re.I)
_RECURRING = re.compile(rf"\b(?:every(?:\s+other)?\s+(?:{_WEEKDAY})|(?:on\s+)?(?:{_WEEKDAY})s(?:\s+(?:mornings?|afternoons?|evenings?|nights?))?)\b", re.I)
_PAST = re.compile(r"\b(?:was|were|went|had|did|got|been|since|ago|last|yesterday)\b|\b\w{3,}ed\b", re.I)
# A date moved: its old day is said after "from" ("the launch moved from 12 May to 9 June").
_MOVED = re.compile(r"\b(?:mov|push|postpon|reschedul|shift|bring|brought|chang|slip|slid|delay|switch)\w*\b", re.I)
_MONTH_ONLY = re.compile(rf"\b(?:in|since|from|by|until|end of|start of)\s+(?:(?:early|mid|late)\s+)?(?:{_MONTHS})\b", re.I)


def expected_kind(question: str) -> str | None:
    """"date", "place" or "person", when the question's first words say so; else None."""
    if _ASKS_DATE.match(question):
        return "date"
    if _ASKS_PLACE.match(question):
        return "place"
    if _ASKS_PERSON.match(question):
        return "person"
    return None


def holds_date(value: str) -> bool:
    """True when a value says a day, a month, a year, a weekday or a time of day."""
    return bool(re.search(rf"\b(?:{_MONTHS}|{_WEEKDAY})s?\b|\b(?:19|20)\d\d\b|\b\d{{1,2}}[:.]\d{{2}}\b|\b\d{{1,2}}\s*(?:am|pm)\b|"
                          r"\b(?:daily|weekly|fortnightly|monthly|quarterly|yearly|annually)\b|\b\d{1,2}(?:st|nd|rd|th)\b", value, re.I))


def fits(kind: str | None, *, attribute: str, value: str) -> bool:
    """Whether a fact can answer a question asking for `kind`: a date question wants a value that
    says a date (or an attribute of one: `_date`, `_schedule`, `_time`); a place question no date; a
    person question no tool, place, date, amount or number."""
    if kind == "date":
        return attribute.endswith(("_date", "_dates", "_schedule", "_time", "_deadline")) or (holds_date(value) and not _year_in_words(value))
    if kind == "place":
        return not attribute.endswith(("_date", "_dates", "_schedule", "_time")) and not re.fullmatch(r"[\d\s:.]+", value.strip()) \
            and not only_when(value)
    if kind == "person":
        return not attribute.endswith(("_tool", "_place", "_date", "_dates", "_schedule", "_time")) and attribute != "uses" \
            and not re.match(r"\s*[$£€\d]", value)  # an amount or a number is nobody
    return True


def _year_in_words(value: str) -> bool:
    """True when all a value says of when is a year among words of a thing ("the big 2025 feature", "our 2026
    roadmap"): no answer to "when …?"."""
    rest = re.sub(r"\b(?:19|20)\d\d\b", " ", value)
    return rest != value and not holds_date(rest) and len(rest.split()) >= 2 and not re.search(r"\b(?:in|since|by|until|from|of)\s+(?:19|20)\d\d\b", value, re.I)


def only_when(value: str) -> bool:
    """True when a value says nothing but when ("Friday 28 June", "Tuesdays 10am", "every other Monday"): no
    answer to "where …?" (the away day's date is not where it was)."""
    rest = re.sub(rf"\b(?:(?:{_WEEKDAY})s?|{_MONTHS}|(?:19|20)\d\d|\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:[:.]\d{{2}})?\s*(?:am|pm)?|"
                  r"every|other|each|on|at|from|to|until|the|of|and|noon|midday|mornings?|afternoons?|evenings?|nights?)\b", " ", value, flags=re.I)
    return bool(value.strip()) and not re.sub(r"[\s,.;:–\-/&]+", "", rest)


_ASKS_DAY = re.compile(r"^\s*(?:on\s+)?(?:what|which)\s+day\b", re.I)
_ASKS_WEEKDAY = re.compile(r"\bday\s+of\s+the\s+week\b|\bweekday\b", re.I)


def day_span(question: str, sentence: str, said_at: datetime | None) -> str | None:
    """The answer to "what day …?" in a sentence, or None when the question does not ask so: "what day of the week
    was the fire drill?" a weekday as said ("tuesday 19th not monday": Tuesday, never one after "not"); "what day in
    July was the exam?" a date the sentence says ("wednesday 9th july": 9 July 2025), else a weekday as said (a
    recurring day: "bins go out on tuesday"). "" when the sentence says neither."""
    if not _ASKS_DAY.match(question):
        return None
    weekdays = [m[0] for m in re.finditer(rf"\b(?:{_WEEKDAY})s?\b", sentence, re.I)
                if not re.search(r"\b(?:not|instead of|from)\s+(?:the\s+|a\s+)?$", sentence[: m.start()], re.I)]
    if not _ASKS_WEEKDAY.search(question) and any(pattern.search(sentence) for pattern in _SAID_DATES):
        if said := date_span(sentence, said_at):
            return said
    return weekdays[0].capitalize() if weekdays else ""


def date_span(sentence: str, said_at: datetime | None, *, near: set[str] = frozenset()) -> str:
    """The date a sentence says, as the answer to "when": an explicit one as said ("13 to 17
    October", "1 March", "June 2025"); a relative day resolved against when it was said ("next
    Monday" said on Wednesday 22 May 2024 → "27 May 2024"; "went live yesterday" → the day before;
    "on Thursday night" → the coming Thursday, or the last one when the sentence speaks of the
    past); a recurring day as said ("every other Friday"). Never one said as the wrong or old value
    ("not 3 January"). Of several, the first after a word of `near` (the question's own words:
    "when does the freeze start?" takes the date after "starts"), else the first; "" when none."""
    found = _dates_in(sentence, said_at)
    if not found:
        return ""
    lowered = sentence.lower()
    anchors = [m.end() for w in near if len(w) >= 3 for m in re.finditer(rf"\b{re.escape(w)}\w*", lowered)]
    if anchors:
        after = [(at, text) for at, text in found if at >= min(anchors)]
        if after:
            return after[0][1]
    return found[0][1]


def _dates_in(sentence: str, said_at: datetime | None) -> list[tuple[int, str]]:
    """Every date phrase of a sentence as (where it starts, the answer's words), in order."""
    taken: list[tuple[int, int, str]] = []

    def add(match: re.Match, text: str) -> None:
        if any(a < match.end() and match.start() < b for a, b, _ in taken):
            return  # inside a longer phrase already taken ("13 to 17 October" holds "17 October")
        before = sentence[: match.start()]
        if re.search(r"\b(?:not|instead of)\s+$", before, re.I) or (re.search(r"\bfrom\s+$", before, re.I) and _MOVED.search(before)):
            return  # "6 January, not 3 January": the wrong value; "pushed from 12 May to 9 June": the old one (not "on leave from 3 May")
        taken.append((match.start(), match.end(), text))

    past = bool(_PAST.search(sentence))
    for pattern in _SAID_DATES:
        for match in pattern.finditer(sentence):
            add(match, _spelled_out(_with_year(match[0].strip(" ,."), said_at, past=past)))
    for match in _RECURRING.finditer(sentence):
        add(match, match[0].strip())
    if said_at is not None:
        for match in _RELATIVE.finditer(sentence):
            if any(re.fullmatch(r",?\s+(?:the\s+)?", sentence[match.end():start]) for start, _, _ in taken):
                continue  # "Friday 26 June": the weekday of the date said after it, not the coming Friday
            add(match, day_said(_relative_day(match["which"], match["day"], said_at, past=past)))
    for match in _MONTH_ONLY.finditer(sentence):
        add(match, match[0].strip())
    for match in _YEAR_ALONE.finditer(sentence):  # "founded in 2016": a year said alone, when nothing says more
        add(match, match["year"])
    return [(start, text) for start, _, text in sorted(taken)]


_FULL_MONTH = {m.lower()[:3]: m for m in list(calendar.month_name)[1:]}


def _spelled_out(date: str) -> str:
    """A date said in chat's short forms as the answer writes it: "17th nov 2023" → "17 November 2023", "the 3rd of
    sept" → "3 September" (a day's ordinal and "of" dropped, the month in full); its order and its year kept."""
    date = re.sub(r"\b(\d{1,2})(?:st|nd|rd|th)\b", r"\1", date, flags=re.I)
    date = re.sub(rf"(?<=\d)\s+of\s+(?=(?:{_MONTHS})\b)", " ", date, flags=re.I)
    return re.sub(rf"\b(?:{_MONTHS})\b\.?", lambda m: _FULL_MONTH[m[0][:3].lower()], date, flags=re.I)


_YEAR_ALONE = re.compile(r"\b(?:in|since|by|until|of|around)\s+(?P<year>(?:19|20)\d\d)\b(?![%]|[.,]\d)", re.I)


def _with_year(said: str, said_at: datetime | None, *, past: bool) -> str:
    """A day of a month said without its year ("10 March", "21–22 May") with the year it falls in:
    of the days with that date around when it was said, the last one not after it when the
    sentence speaks of the past, else the first one not more than a week before it."""
    if said_at is None or re.search(r"\b\d{4}\b", said):
        return said
    month = next((m for m in re.findall(r"[a-z]+", said.lower()) if m in _MONTH_NUMBER), None)
    day = re.search(r"\d{1,2}", said)
    if month is None or day is None:
        return said
    candidates = []
    for year in (said_at.year - 1, said_at.year, said_at.year + 1):
        if int(day[0]) <= calendar.monthrange(year, _MONTH_NUMBER[month])[1]:
            candidates.append(datetime(year, _MONTH_NUMBER[month], int(day[0]), tzinfo=said_at.tzinfo))
    if past:
        fitting = [d for d in candidates if d <= said_at + timedelta(days=1)]
        chosen = fitting[-1] if fitting else None
    else:
        fitting = [d for d in candidates if d >= said_at - timedelta(days=7)]
        chosen = fitting[0] if fitting else None
    return f"{said} {chosen.year}" if chosen is not None else said


_MONTH_NUMBER = {name.lower(): number for number in range(1, 13)
                 for name in (calendar.month_name[number], calendar.month_abbr[number])}


def _relative_day(which: str | None, day: str, said_at: datetime, *, past: bool) -> datetime:
    which, day = (which or "").lower(), day.lower()
    if day in {"today", "tonight"}:
        return said_at
    if day in {"yesterday", "tomorrow"}:
        return said_at + timedelta(days=-1 if day == "yesterday" else 1)
    ahead = (_WEEKDAYS.index(day) - said_at.weekday()) % 7
    if which == "next":
        return said_at + timedelta(days=ahead or 7)
    if which in {"last", "since"} or (past and which not in {"this", "by", "until"}):
        return said_at - timedelta(days=(7 - ahead) % 7 or 7)
    return said_at + timedelta(days=ahead)


