"""A short correction read against the statement it corrects.

Chat corrects by ellipsis: "we bought 120 new CT40s for Tilbury", then "sorry, 150"; "retro is
moving to Thursday afternoons", then "sorry, Wednesday"; "offsite 2026 → Bruges", then "scratch
that, the Bruges hotel fell through. it's Ghent". The correction names the new value (and
sometimes the wrong one) but not what it is about: that is the statement before it. `amended`
puts the new value into that statement in place of the one it replaces, giving the sentence the
speaker meant ("we bought 150 new CT40s for Tilbury"), which the extractor and the answers read
as any other.

Which value is replaced, in order: the wrong one the correction names ("21–22 May, not 14–15");
else the statement's one value of the new value's shape (a number for a number, a weekday for a
weekday, a date, a time, an amount, a model code); else, among several names, the one the
correction also mentions ("Crowdin. the Lokalise quote was silly"). No replacement, no amendment:
a correction that is itself a whole statement ("correction: Sofie is release captain for Q3") is
read on its own, as before.
"""

import re
from dataclasses import dataclass
from datetime import timedelta

# A short correction is about a statement at most this long before it and among the scope's last
# few episodes before it (the extractor looks back from the correction, the answers forward from
# the statement).
CORRECTION_WITHIN = timedelta(days=7)
CORRECTION_AMONG = 3

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_ORD = r"(?:st|nd|rd|th)?"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
# A weekday said before a date is part of it: "Friday 19 June" is one date (corrected as one: "it's Friday 26 June").
_WEEKDAY_BEFORE = rf"{_WEEKDAY},?\s+(?:the\s+)?"
_DAY_NUMBERS = rf"\d{{1,2}}{_ORD}(?:\s*(?:-|–|to)\s*\d{{1,2}}{_ORD})?"

# Shapes of a value, most specific first: a value's shape is the first that matches all of it.
_SHAPES: list[tuple[str, re.Pattern]] = [
    ("time", re.compile(r"(?<![\w:.])\d{1,2}(?:[:.]\d{2}\s*(?:am|pm)?|\s*(?:am|pm))(?![\w:])", re.I)),
    ("date", re.compile(rf"(?<![\w])(?:{_WEEKDAY_BEFORE})?(?:{_DAY_NUMBERS}\s+(?:of\s+)?{_MONTH}|{_MONTH}\.?\s+{_DAY_NUMBERS})(?:,?\s+\d{{4}})?(?![\w])", re.I)),
    ("month", re.compile(rf"(?<![\w]){_MONTH}(?:\s+\d{{4}})?(?![\w])", re.I)),
    ("weekday", re.compile(rf"(?<![\w]){_WEEKDAY}s?(?![\w])", re.I)),
    ("amount", re.compile(r"(?<![\w])[£$€]\s?\d[\d,.]*\s?(?:k|m|bn|million|billion)?(?![\w])|(?<![\w.])\d[\d,.]*\s?(?:k|m)?\s?(?:euros?|dollars?|pounds?|eur|usd|gbp)(?![\w])", re.I)),
    ("number", re.compile(r"(?<![\w.£$€:])\d[\d,]*(?:\.\d+)?(?:\s*(?:-|–)\s*\d[\d,]*)?(?![\w:]|\.\d)")),
    ("day", re.compile(r"(?<![\w.])\d{1,2}(?:st|nd|rd|th)(?![\w])", re.I)),  # "the 24th": a day of the month
    ("code", re.compile(r"(?<![\w.-])(?=[\w.+-]*[A-Za-z])(?=[\w.+-]*\d)[A-Za-z0-9][\w.+-]*[A-Za-z0-9](?![\w-])")),
    ("name", re.compile(r"(?<![\w'-])(?:[A-Z][\w&+'.-]*|[a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?:\s+(?:[A-Z0-9][\w&+'.-]*))*")),
]
_SHAPE = dict(_SHAPES)

# How a correction opens. "actually" and "no" alone are everyday chat: they mark a correction only
# with "it's" / "make that" after them.
_OPENING = re.compile(
    r"^(?:(?:[\w ]{0,25}\b(?:correction|typo|misspoke|mistake)\b[\w ]{0,25}:)|correction\b(?:\s+on\s+(?:the\s+above|that|my\s+last))?|"
    r"typo\b(?:\s+(?:above|there|in\s+my\s+last))?|(?:sorry|oops|my bad|my mistake)(?=\s*[,:;.!-]|\s+i\s+mean)|scratch that|i meant|i mean|no wait|wait no|"
    r"(?:actually|no)(?=[\s,]+(?:it'?s|it is|it'll be|it will be|make that|that should be|i meant)\b)|"
    r"(?:it'?s|it is|it'll be|it will be)\s+actually\b)[\s,:;.!—–-]*",
    re.I,
)
# Words before the new value that are no part of it: "it's in wms-core", "we're going with Confluent Cloud".
_LEAD = re.compile(
    r"^(?:(?:actually|no|sorry|i meant|i mean|i'?m sorry)[\s,]+)*(?:it'?s|it is|it'll be|it will be|that'?s|that should be|should be|make that|make it|"
    r"i meant|i mean|meant|we'?re going with|we are going with|going with|we'?ll use|we went with|it'?ll be)?\s*(?:in|at|on|to|the)?\s*",
    re.I,
)
# Words after the new value that are no part of it: "it's Ashton Court again this year", "Fridays instead".
_AFTER_VALUE = re.compile(r"(?:\s+(?:again|instead|after all|then|this year|this time|as usual|as before))+\s*[.!]*$", re.I)
_SAYS_VALUE = re.compile(r"(?:it'?s|it is|it'll be|it will be|make that|make it|i meant|i mean|we'?re going with|we are going with|going with|"
                         r"that should be|should be)\b", re.I)
_NOT = re.compile(r"(?:^|[,.;:]\s*|\s)not\s+(?:the\s+)?(?P<wrong>(?:[^,.;:!?]|(?<=\d)[:.](?=\d))+?)\s*(?=[,;!?]|[.:](?!\d)|\s[—–-]\s|$)", re.I)
# The old value named by where the thing was: "we moved it out of routing", "instead of Jira".
_OUT_OF = re.compile(r"\b(?:out of|instead of|rather than|away from|off)\s+(?:the\s+)?(?P<wrong>[A-Z][\w.&+-]*(?:\s+[A-Z][\w.&+-]*)*|[\w][\w.+-]*)")
_STOP = frozenset("a an the of in on at to for and or but is are was were be it its it's we our i my me you your this that "
                  "with from by as not no so just now then above here there".split())


@dataclass(frozen=True)
class Correction:
    value: str  # the new value, as said
    wrong: str  # the wrong value it names, or ""
    words: frozenset[str]  # the rest of the correction's words (lower case), for "the Lokalise quote was silly"
    weak: bool = False  # opened by an apology alone ("sorry, …"), which also greets: "Sorry, John."


def correction_read(text: str) -> Correction | None:
    """The new value (and the wrong one, if named) of a short correction, or None when `text`
    does not open as a correction or its value is a whole statement."""
    text = re.sub(r"[’‘]", "'", (text or "").strip())
    opened = _OPENING.match(text)
    if not opened or not opened.group(0).strip():
        return None
    rest = text[opened.end():].strip()
    if not rest:
        return None
    wrong = ""
    if negated := _NOT.search(rest):
        wrong = negated["wrong"].strip()
        rest_value = rest[: negated.start()]
    else:
        rest_value = rest
        if away := _OUT_OF.search(rest):
            wrong = away["wrong"].strip()
    # The value: the first clause that is a bare value after its lead-in words ("150", "it's Ghent",
    # "we're going with Confluent Cloud"), at most five words, none of them a verb of its own.
    value = ""
    for index, clause in enumerate(re.split(r"(?<=[.!?;])\s+|,\s+|\s+[-–—]\s+", rest_value)):
        clause = clause.strip(" .!?;,")
        if index and not _SAYS_VALUE.match(clause):
            continue  # after the first clause only "it's Ghent": "sorry to hear that, John" names no value
        bare = _AFTER_VALUE.sub("", _LEAD.sub("", clause, count=1)).strip(" .!?;,")
        if bare and len(bare.split()) <= 5 and _shape_of(bare):
            value = bare
            break
    if not value or normalise(value) == normalise(wrong):
        return None
    words = frozenset(w for w in re.findall(r"[\w'-]+", text.lower()) if w not in _STOP) - set(normalise(value).split())
    words |= frozenset(part for w in words if "-" in w for part in normalise(w).split())  # "Clear-Com" is "clear com" too
    weak = bool(re.fullmatch(r"(?:sorry|oops|my bad|my mistake|no wait|wait no)[\s,:;.!-]*", opened.group(0), re.I))
    return Correction(value=value, wrong=wrong, words=words, weak=weak)


def amended(previous: str, correction: str, *, same_speaker: bool = True) -> str | None:
    """`previous` as `correction` says it should have been, or None when the correction is not a
    short one or names nothing in `previous` that it could replace. A name after an apology alone
    corrects only its speaker's own statement ("Sorry, John." to John is no correction)."""
    read = correction_read(correction)
    if read is None or not previous:
        return None
    if read.weak and not same_speaker and _shape_of(read.value) == "name" and not read.wrong:
        return None
    previous = re.sub(r"[’‘]", "'", previous)
    span = _replaced_span(previous, read)
    if span is None:
        return None
    start, end, shape = span
    value = _narrowed(read.value, shape)
    if normalise(previous[start:end]) == normalise(value):
        return None
    return previous[:start] + value + previous[end:]


def holds_shape(previous: str, correction: str) -> bool:
    """Whether `previous` says something a short `correction` could be about: the wrong value it
    names, or a value of the new value's shape. The statement a correction corrects is the latest
    one that does (chatter in between, "5 mins", is passed over; a statement that does but cannot
    be amended without guessing stops the search)."""
    read = correction_read(correction)
    if read is None or not previous:
        return False
    previous = re.sub(r"[’‘]", "'", previous)
    if read.wrong and re.search(rf"(?<![\w]){re.escape(read.wrong)}(?![\w])", previous, re.I):
        return True
    shape = _shape_of(read.value)
    if shape == "day" and not _spans(previous, "day"):
        return _day_of_date(previous) is not None
    return shape is not None and any(normalise(m[0]) != normalise(read.value) for m in _spans(previous, shape))


def _replaced_span(previous: str, read: Correction) -> tuple[int, int, str] | None:
    if read.wrong:
        found = re.search(rf"(?<![\w]){re.escape(read.wrong)}(?![\w])", previous, re.I)
        if found is None and (ordinal := re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)", read.wrong.strip(), re.I)):
            found = re.search(rf"(?<![\w.:]){ordinal[1]}(?:st|nd|rd|th)?(?![\w:])", previous, re.I)  # "not the 19th" for "19 June"
        if found:
            return _widened(previous, found.start(), found.end(), read.value, _shape_of(read.wrong) or "name")
    shape = _shape_of(read.value)
    if shape == "day" and not _spans(previous, "day"):
        # "no wait, it's the 24th" after "the inspection is 17 October": the day of the statement's one date
        return _day_of_date(previous)
    if shape is None:
        return None
    value = normalise(read.value)
    spans = [m for m in _spans(previous, shape) if normalise(m[0]) != value]
    if shape in ("name", "code") and len(spans) != 1:
        # Several names: the one the correction mentions too ("the Lokalise quote was silly").
        spans = [m for m in spans if set(normalise(m[0]).split()) & read.words]
    elif len(spans) > 1 and (mentioned := [m for m in spans if set(normalise(m[0]).split()) & read.words]):
        spans = mentioned
    if len(spans) == 1:
        return spans[0][1], spans[0][2], shape
    if not spans and shape == "name":
        # "actually it's in wms-core, we moved it out of routing": a word of the statement the correction names as the old place
        for word in re.finditer(r"[\w][\w'-]*", previous):
            if word[0].lower() in read.words and word[0].lower() not in _STOP and len(word[0]) > 2:
                return word.start(), word.end(), shape
    return None


def _widened(previous: str, start: int, end: int, value: str, shape: str) -> tuple[int, int, str]:
    """The wrong value's span grown to the whole value it is part of, when the new value says all of that value:
    "Thursday" in "Thursday 18 April" for "Tuesday 16 April" (a date for a date), "Gill" in "Dr Moira Gill" for
    "Dr Moira Hill" (a name whose other words the new one repeats). Else the wrong value's span as found."""
    new_shape = _shape_of(value)
    if new_shape is None:
        return start, end, shape
    for _, outer_start, outer_end in _spans(previous, new_shape):
        if outer_start > start or outer_end < end or (outer_start, outer_end) == (start, end):
            continue
        if new_shape != shape:
            return outer_start, outer_end, new_shape
        if new_shape == "name":
            rest = previous[outer_start:start] + " " + previous[end:outer_end]
            if set(normalise(rest).split()) <= set(normalise(value).split()):
                return outer_start, outer_end, new_shape
    return start, end, shape


def _day_of_date(previous: str) -> tuple[int, int, str] | None:
    dates = _spans(previous, "date")
    if len(dates) == 1 and (day := re.search(r"(?<![\w])\d{1,2}(?:st|nd|rd|th)?(?![\w])", dates[0][0])):
        return dates[0][1] + day.start(), dates[0][1] + day.end(), "day_number"
    return None


def _spans(text: str, shape: str) -> list[tuple[str, int, int]]:
    found = []
    for m in _SHAPE[shape].finditer(text):
        phrase = m.group(0).strip(" .,'")
        if shape == "name" and m.start() == 0 and phrase.split()[0].lower() in _STOP:
            continue  # "The …", "We …": capitalised as the first word
        if shape == "name" and _shape_of(phrase) != "name":
            continue  # "Q3", "2026": not a name
        found.append((phrase, m.start(), m.start() + len(phrase)))
    return found


def _shape_of(value: str) -> str | None:
    value = value.strip(" .,!?")
    for shape, pattern in _SHAPES:
        if (m := pattern.fullmatch(value)) is not None:
            return shape
    # "end of July", "every 2nd Thursday": a phrase around one value of a shape
    for shape, pattern in _SHAPES[:4]:
        if pattern.search(value) and len(value.split()) <= 4:
            return shape
    return None


def _narrowed(value: str, shape: str) -> str:
    """The part of the new value of the replaced one's shape: "every 2nd Thursday" for "Tuesday"
    is "Thursday", "21–22 May" for "14–15" is "21–22"; "the 24th" for the day of "17 October" is "24"."""
    if shape == "day_number" and (day := re.search(r"\d{1,2}", value)):
        return day[0]
    if _shape_of(value) == shape and _SHAPE[shape].fullmatch(value.strip()):
        return value.strip()
    if shape in _SHAPE and (m := _SHAPE[shape].search(value)):
        return m.group(0).strip()
    return value.strip()


def normalise(text: str) -> str:
    return " ".join(re.findall(r"[\w]+", (text or "").lower()))
