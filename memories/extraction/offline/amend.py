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
from functools import lru_cache

from memories.extraction.offline.contrast import contrasted
from memories.extraction.offline.truecase import english
from memories.extraction.offline.words import CLAUSE_WORDS, SMALL_WORDS

# A short correction is about a statement at most this long before it and among the scope's last
# few episodes before it (the extractor looks back from the correction, the answers forward from
# the statement).
CORRECTION_WITHIN = timedelta(days=7)
CORRECTION_AMONG = 3

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_ORD = r"(?:st|nd|rd|th)?"
_WEEKDAY = r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|tues?|weds|thu(?:rs?)?|fri)"
# A weekday said before a date is part of it: "Friday 19 June" is one date (corrected as one: "it's Friday 26 June").
_WEEKDAY_BEFORE = rf"{_WEEKDAY},?\s+(?:the\s+)?"
_DAY_NUMBERS = rf"\d{{1,2}}{_ORD}(?:\s*(?:-|–|to)\s*\d{{1,2}}{_ORD})?"

# Shapes of a value, most specific first: a value's shape is the first that matches all of it.
_SHAPES: list[tuple[str, re.Pattern]] = [
    ("time", re.compile(r"(?<![\w:.])\d{1,2}(?:[:.]\d{2}\s*(?:am|pm)?|\s*(?:am|pm))(?![\w:])", re.I)),
    ("date", re.compile(rf"(?<![\w])(?:{_WEEKDAY_BEFORE})?(?:{_DAY_NUMBERS}\s+(?:of\s+)?{_MONTH}|{_MONTH}\.?\s+{_DAY_NUMBERS})(?:,?\s+\d{{4}})?(?![\w])", re.I)),
    ("month", re.compile(rf"(?<![\w]){_MONTH}(?:\s+\d{{4}})?(?![\w])", re.I)),
    ("weekday", re.compile(rf"(?<![\w]){_WEEKDAY}s?(?![\w])", re.I)),
    # how often: "monthly", "every 6 weeks", "every other month"
    ("frequency", re.compile(r"(?<![\w])(?:daily|weekly|fortnightly|biweekly|monthly|quarterly|annually|yearly|"
                             r"every\s+(?:other\s+)?(?:\d+\s+)?(?:days?|weeks?|fortnights?|months?|quarters?|years?))(?![\w])", re.I)),
    ("amount", re.compile(r"(?<![\w])[£$€]\s?\d[\d,.]*\s?(?:k|m|bn|million|billion)?(?![\w])|(?<![\w.])\d[\d,.]*\s?(?:k|m)?\s?(?:euros?|dollars?|pounds?|eur|usd|gbp)(?![\w])", re.I)),
    ("number", re.compile(r"(?<![\w.£$€:])\d[\d,]*(?:\.\d+)?(?:\s*(?:-|–)\s*\d[\d,]*)?(?:\s?%|\s?per\s?cent\b)?(?![\w:]|\.\d)")),
    ("day", re.compile(r"(?<![\w.])\d{1,2}(?:st|nd|rd|th)(?![\w])", re.I)),  # "the 24th": a day of the month
    ("code", re.compile(r"(?<![\w.-])(?=[\w.+-]*[A-Za-z])(?=[\w.+-]*\d)[A-Za-z0-9][\w.+-]*[A-Za-z0-9](?![\w-])")),
    ("name", re.compile(r"(?<![\w'-])(?:[A-Z][\w&+'.-]*|[a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?:\s+(?:[A-Z0-9][\w&+'.-]*))*")),
]
_SHAPE = dict(_SHAPES)
# The shapes a longer phrase is read as when it holds one ("end of July", "WEDNESDAY night 8pm", "every 2nd Thursday").
_PHRASE_SHAPES = 5

# Chat's interjections before a correction's opening: "ugh typo, $105/hr", "lol no sorry it's …".
_INTERJECTION = r"(?:ugh|argh|oh|ah|eh|hmm+|ok|okay|lol|lmao|ha(?:ha)+|no|nope)[\s,.!]+"
# How a correction opens. "actually" and "no" alone are everyday chat: they mark a correction only
# with "it's" / "make that" after them.
_OPENING = re.compile(
    rf"^(?:{_INTERJECTION})*"
    r"(?:(?:[\w ]{0,25}\b(?:correction|typo|misspoke|mistake)\b[\w ]{0,25}:)|correction\b(?:\s+on\s+(?:the\s+above|that|my\s+last))?|"
    r"typo\b(?:\s+(?:above|there|in\s+my\s+last))?|"
    r"ignore\s+(?:my\s+last(?:\s+(?:message|msg|one|post|text))?|that(?:\s+last\s+(?:one|message|msg))?|me(?:\s+(?:yesterday|earlier|above))?|"
    r"the\s+last\s+(?:one|message|msg))(?:\s+(?:re|about|on)\s+(?:the\s+)?[\w ]{1,30}?)?(?=\s*[,:;.!—–-]|\s*$)|"
    # "sorry, …", "my bad — 11 September", "Sorry it's meeting room 2 not 3", "oops 124 not 142"
    r"(?:sorry|apologies|oops|my bad|my mistake)(?=\s*[,:;.!—–-]|\s+i\s+mean|\s+(?:it'?s|it is)\b|\s+\d[\w.,%]*\s+not\s|"
    r"\s+[£$€]?\d[\w.,%/-]*(?:\s*[,.;!—–-]|\s*$)|\s+@?[a-z][\w-]*[,!]\s*(?:it'?s|it is|i meant|i mean)\b)|scratch that|i meant|i mean|no wait|wait no|"
    r"(?:actually|no)(?=[\s,]+(?:it'?s|it is|it'll be|it will be|make that|that should be|i meant)\b)|"
    r"actually(?=[\s,]+(?:from|on|in|at|until|by)\s+[\w-]+(?:\s+[\w-]+)?\s*(?:$|[.,;!—–-]))|"  # "actually from february 1 — paperwork"
    r"(?:it'?s|it is|it'll be|it will be)\s+actually\b)[\s,:;.!—–-]*",
    re.I,
)
# Words before the new value that are no part of it: "it's in wms-core", "we're going with Confluent Cloud".
_LEAD = re.compile(
    r"^(?:(?:actually|no|sorry|i meant|i mean|i'?m sorry)[\s,]+)*(?:it'?s|it is|it'll be|it will be|that'?s|that should be|should be|make that|make it|"
    r"i meant|i mean|meant|we'?re going with|we are going with|going with|we'?ll use|we went with|it'?ll be|"
    r"it(?:'?s| has)? moved to|moved to|it went to|we(?:'?re| are| were) (?:at|in)|(?:her|his|their|the) name'?s|(?:her|his|their|the) name is)?"
    r"\s*(?:(?:in|at|on|to|from|until|by|the|a|an)\b)?\s*",  # (whole words: "Frome", "Tony", "Anna" are names)
    re.I,
)
# Words after the new value that are no part of it: "it's Ashton Court again this year", "Fridays instead".
_AFTER_VALUE = re.compile(r"(?:\s+(?:again|instead|after all|then|now|this year|this time|as usual|as before))+\s*[.!]*$", re.I)
_SAYS_VALUE = re.compile(r"(?:it'?s|it is|it'll be|it will be|make that|make it|i meant|i mean|we'?re going with|we are going with|going with|"
                         r"it(?:'?s| has)? moved to|it went to|we(?:'?re| are| were) (?:at|in)|(?:her|his|their|the) name(?:'?s| is)|"
                         r"that should be|should be)\b", re.I)
_NOT = re.compile(r"(?:^|[,.;:]\s*|\s)not\s+(?:the\s+)?(?P<wrong>(?:[^,.;:!?]|(?<=\d)[:.](?=\d))+?)\s*(?=[,;!?]|[.:](?!\d)|\s[—–-]\s|$)", re.I)
# The old value named by where the thing was: "we moved it out of routing", "instead of Jira".
_OUT_OF = re.compile(r"\b(?:out of|instead of|rather than|away from|off)\s+(?:the\s+)?(?P<wrong>[A-Z][\w.&+-]*(?:\s+[A-Z][\w.&+-]*)*|[\w][\w.+-]*)")
_STOP = SMALL_WORDS


# Chat's mark of a correction to the line before: "*35", "*Wednesday".
_STAR = re.compile(r"^\*\s*(?=[\w£$€])")
# A short value, then the wrong one: "14 JULY not june", "unit 21 not 12", "Small but important: it's £148k, not £184k".
_VALUE_NOT = re.compile(r"(?:(?:it'?s|it is|that'?s|we'?re|we are)(?:\s+(?:at|in))?\s+)?(?P<value>[^,.;:!?]{1,40}?)[,.]?\s+not\s+(?:the\s+)?(?P<wrong>[^,.;:!?]+?)\s*(?=[,.;:!?]|$)", re.I)
# A word of a clause of its own ("the fridge is not working"), not of a value.
_CLAUSE_WORD = re.compile(rf"\b(?:{'|'.join(CLAUSE_WORDS)})\b", re.I)


def _named_wrong(text: str, previous: str) -> int | None:
    """Where a correction without a word of correction begins: a value of at most four words, then "not" and a wrong value
    that `previous` said, opening the text or one of its sentences ("Wonderful news. Small but important before it
    goes on social: it's £148k, not £184k."); its offset in `text`, or None."""
    for start in [0, *(m.end() for m in re.finditer(r"[.!?:]\s+", text))]:
        said = _VALUE_NOT.match(text, start)
        if said and len(said["value"].split()) <= 4 and not _CLAUSE_WORD.search(said["value"]) \
                and len(said["wrong"].split()) <= 4 and _wrong_found(previous, said["wrong"].strip()) is not None:
            return start
    return None


# A correction that opens with the wrong value, then says the right one: "not blefa, thielmann", "14 JULY not june"
# is read by `_NOT`; "Not Loretta, Floriditas, 12.30".
_NOT_FIRST = re.compile(r"^(?:no[,.!]?\s+)?not\s+(?:the\s+)?(?P<wrong>[\w'&.-]+(?:\s+[\w'&.-]+){0,2}?)\s*[,;:—–-]\s*(?:it'?s\s+|it is\s+)?(?P<right>[^,.;:!?]+)", re.I)


@dataclass(frozen=True)
class Correction:
    value: str  # the new value, as said
    wrong: str  # the wrong value it names, or ""
    words: frozenset[str]  # the rest of the correction's words (lower case), for "the Lokalise quote was silly"
    weak: bool = False  # opened by an apology alone ("sorry, …"), which also greets: "Sorry, John."
    reply: bool = False  # no word of correction: a reply naming who said the statement, or answering their checking question
    stated: bool = False  # the value said as one ("it's Ghent", "it moved to MAP Brewing"), not a bare word ("Holly!", "Wow")
    spelling: bool = False  # it spells the value out or calls the first a typo ("Karl with a K"): a name respelled


# A reply corrects with no word of correction when it names the one who said the statement ("Dana it's $2,800",
# "It's Vivint June", "$200 Nico, it went up") or answers a question that checked a value ("the deposit is $150
# right?" – "$200"). A checking question is a yes-or-no one: no wh-word opens it.
_WH = re.compile(r"^\W*(?:who|whom|whose|what|what's|when|where|why|how|which|anyone|anybody|does anyone|can|could|would|will|shall|should)\b", re.I)
# The tag that makes a statement a question ("…, right?"); dropped when the question is read as the statement it checked.
_TAG = re.compile(r"[\s,]*(?:\b(?:right|correct|yeah|yes|no|innit|isn'?t it|aren'?t they|or not|ok|okay)\b)?[\s,]*\?+\s*$", re.I)
_COPULA_FIRST = re.compile(r"^(?P<be>is|are|was|were)\s+(?P<subject>.+)$", re.I)
# Everything but words, spaces and the marks a value or a clause holds (emoji, arrows): a clause ends there.
_NOT_TEXT = re.compile(r"[^\w\s,.;:!?'\"$£€%&@/+()\-–—]+")


@lru_cache(maxsize=1024)
def checking_questions(previous: str) -> tuple[str, ...]:
    """The sentences of `previous` that check a value with a yes-or-no question ("the deposit on the season
    leases is $150 right?", "is the standard tune $89 now?", "site says 30 days?"), in order."""
    return tuple(
        sentence for sentence in (s.strip() for s in re.split(r"(?<=[.!?])\s+", re.sub(r"[’‘]", "'", previous or "").strip()))
        if sentence.endswith("?") and not _WH.match(sentence) and len(sentence.split()) >= 3
        and any(_spans(sentence, shape) for shape, _ in _SHAPES)
    )


def may_reply(text: str, names) -> bool:
    """Whether `text` could be a reply that corrects (`correction_read` with a statement before it), read on its own:
    it calls one of `names` by name, or its first clause says a value ("it's B21", "$200", "Tuesday!"). What the
    extractor asks before it looks up the statements before a message."""
    text = re.sub(r"[’‘]", "'", text or "")
    said = {w.lower() for w in re.findall(r"(?<![\w'])@?([A-Za-z][\w-]*)(?![\w'-])", text)}
    if said & {str(name).lower() for name in names} or _NOT.search(text):
        return True
    first = re.split(r"(?<=[.!?;])\s+|,\s+|\s+[-–—]\s+", _NOT_TEXT.sub(" . ", text).strip(" ."), maxsplit=1)[0].strip(" .!?;,")
    bare = _AFTER_VALUE.sub("", _LEAD.sub("", first, count=1)).strip(" .!?;,")
    value = _clause_value(bare)
    return bool(_SAYS_VALUE.match(first)) or (bool(value) and _shape_of(value) != "name")  # a bare name is no reply's value


def _addressed(text: str, speaker: str) -> str | None:
    """`text` without the name of `speaker` when it calls them by it ("Dana it's $2,800", "It's Vivint June",
    "@marcus …"; not "Dana's idea"), else None."""
    name = (speaker or "").strip()
    if len(name) < 2 or not name.replace("-", "").isalpha():
        return None
    found = re.search(rf"(?:^|(?<=[\s,(]))@?{re.escape(name)}(?![\w'’-])", text, re.I)
    if found is None:
        return None
    return re.sub(r"\s{2,}", " ", (text[: found.start()] + text[found.end():])).strip(" ,:")


@lru_cache(maxsize=1024)
def correction_read(text: str, *, previous: str = "", previous_speaker: str = "") -> Correction | None:
    """The new value (and the wrong one, if named) of a short correction, or None when `text`
    does not open as a correction or its value is a whole statement. With the statement it follows
    (`previous`, said by `previous_speaker`), a reply that names its speaker or answers its checking
    question corrects with no word of correction (`Correction.reply`)."""
    text = re.sub(r"[’‘]", "'", (text or "").strip())
    if (first := _NOT_FIRST.match(text)) and (right := _said_instead(
            first["wrong"], first["right"], said=bool(previous) and _wrong_found(previous, first["wrong"].strip()) is not None)):
        words = frozenset(w for w in re.findall(r"[\w'-]+", text.lower()) if w not in _STOP) - set(normalise(right).split())
        return Correction(value=right, wrong=first["wrong"].strip(), words=words, stated=True)
    opened = _OPENING.match(text) or _STAR.match(text)
    reply = False
    if opened and opened.group(0).strip():
        rest = text[opened.end():].strip()
    elif previous and (first_said := _VALUE_ACTUALLY.match(text)) and len(first_said["value"].split()) <= 3 \
            and not _CLAUSE_WORD.search(first_said["value"]):
        rest = first_said["value"]  # "421 actually, I just re-ran the report"
    elif previous and _SPELLING_MARK.search(text) and (_SAYS_VALUE.match(text) or re.match(r"[A-Z0-9][A-Z0-9-]+[.!]", text)):
        rest = text  # "it's hollins, with an n": a name spelled out; "BISTO. … stupid autocorrect": shouted
    elif previous and (begins := _named_wrong(text, previous)) is not None:
        rest = text[begins:].strip()  # "14 JULY not june", "unit 21 not 12": the wrong value the statement said
    elif previous and ((named := _addressed(text, previous_speaker)) is not None or checking_questions(previous)):
        rest, reply = (named if named is not None else text), True
    else:
        return None
    # A reply's bare value ("$200", "Tuesday!") answers a question that checked one; to a statement, and in any clause
    # but the first, a reply says its value as one ("it's B21", "we're at the Rialto").
    asked = reply and bool(checking_questions(previous))
    addressed = reply and named is not None
    rest = _NOT_TEXT.sub(" . ", rest).strip(" .")
    if not rest:
        return None
    wrong = ""
    negated = _NOT.search(rest)
    if negated and reply and not (len(negated["wrong"].split()) <= 4 and _shape_of(negated["wrong"])):
        negated = None  # a reply's "not much has changed" names no wrong value
    if negated:
        wrong = negated["wrong"].strip()
        rest_value = rest[: negated.start()]
    else:
        rest_value = rest
        # (in its first sentence: "… — paperwork. I still sign off every new recipe" names no old value; a reply's "I'm off to
        # bake" is its own talk)
        if not reply and (away := _OUT_OF.search(re.split(r"(?<=[.!?])\s+", rest, maxsplit=1)[0])):
            wrong = away["wrong"].strip()
    # The value: the first clause that is a bare value after its lead-in words ("150", "it's Ghent",
    # "we're going with Confluent Cloud"), at most five words, none of them a verb of its own; or one that
    # opens with a value ("26 with partners", "$105/hr", "Yeti's trailer") or says "the code is RIDGE15".
    value, stated = "", False
    apology = opened is not None and bool(re.fullmatch(_APOLOGY, opened.group(0), re.I))
    for index, clause in enumerate(re.split(r"(?<=[.!?;])\s+|,\s+|\s+[-–—]\s+", rest_value)):
        clause = re.sub(r"^(?:so|then|and)\s+(?=it'?s\b|it is\b)", "", clause.strip(" .!?;,"), flags=re.I)  # "… So it's Wednesday!"
        if index and (not _SAYS_VALUE.match(clause) or (reply and not addressed)):
            continue  # after the first clause only "it's Ghent": "sorry to hear that, John" names no value
        stated = bool(_SAYS_VALUE.match(clause))
        bare = _SPELLING.sub("", _AFTER_VALUE.sub("", _LEAD.sub("", clause, count=1)).strip(" .!?;,"))
        value = _clause_value(bare)
        if not value and wrong and (wrong_shape := _shape_of(wrong)) and wrong_shape != "name" \
                and len(of_shape := _spans(bare, wrong_shape)) == 1:
            value = of_shape[0][0]  # "it's meeting room 2 not 3": the one value of the wrong one's shape
        if value and reply and not stated and not wrong and (_shape_of(value) == "name" or not asked):
            value = ""  # a reply's bare word is its own talk ("Wow", "Thanks", "Hey Tim", "5 years already!")
        if not value and not reply and (stated or wrong or (opened is not None and not apology)):
            value = _plain_value(bare)  # in lowercase chat: "correction: blue tin!", "sorry, fernhill farm not fernleigh"
        if value:
            break
    if not value or normalise(value) == normalise(wrong):
        return None
    # (a reply's words without the name it calls its addressee by)
    words = frozenset(w for w in re.findall(r"[\w'-]+", (rest if reply else text).lower()) if w not in _STOP) - set(normalise(value).split())
    words |= frozenset(part for w in words if "-" in w for part in normalise(w).split())  # "Clear-Com" is "clear com" too
    weak = not reply and apology
    return Correction(value=value, wrong=wrong, words=words, weak=weak, reply=reply, stated=stated,
                      spelling=bool(_SPELLING_MARK.search(text)))


# A value, then "actually", opening a reply: "421 actually, I just re-ran the report".
_VALUE_ACTUALLY = re.compile(r"^(?P<value>(?:[^,.;:!?]|(?<=\d)[,.](?=\d)){1,30}?)\s+actually\b", re.I)
# How chat spells a name out after it: "Karl with a K", "hollins, with an n", "docherty with a c".
_SPELLING = re.compile(r",?\s+with\s+(?:a|an|two|double|one)\s+['\"]?[a-z]['\"]?s?(?![\w'-]).*$", re.I)
_SPELLING_MARK = re.compile(r"\bwith\s+(?:a|an|two|double|one)\s+['\"]?[a-z]['\"]?s?(?![\w'-])|\bspel+(?:t|ed|ling|s)?\b|\btypo\b|autocorrect", re.I)


def spells_out(text: str) -> bool:
    """Whether a message says it spells a name out or that one was mistyped ("with a K", "typo", "autocorrect"): it
    may correct the statement before it with no other word of correction (`correction_read` with that statement)."""
    return _SPELLING_MARK.search(text or "") is not None


def _respelled(previous: str, value: str, *, spelling: bool = False) -> tuple[int, int, str] | None:
    """The one word of `previous` that `value`, a single word, spells otherwise ("doherty" for "docherty", "carl" for
    "Karl", "hollis" for "hollins"): alike in four of five letters, or in three of five when the correction says it
    spells a name out (`spelling`: "with a K", "typo", "autocorrect": "biscuit" for "bisto"). None when no word, or
    several, are."""
    from difflib import SequenceMatcher

    if len(value.split()) != 1 or len(value) < 4:
        return None
    wanted = value.lower()
    least = 0.6 if spelling else 0.8
    found = [m for m in re.finditer(r"(?<![\w'-])[A-Za-z][\w'-]{2,}", previous)
             if m[0].lower() != wanted and m[0].lower() not in _STOP and SequenceMatcher(None, m[0].lower(), wanted).ratio() >= least]
    return (found[0].start(), found[0].end(), "words") if len(found) == 1 else None


# An opening that is an apology alone, which also greets ("Sorry, John.").
_APOLOGY = rf"(?:{_INTERJECTION})*(?:sorry|oops|my bad|my mistake|no wait|wait no)[\s,:;.!-]*"
# A value said in lowercase words: at most three, none of them a clause's ("blue tin", "the rugby club", "fernhill farm").
_PLAIN = re.compile(r"[a-z][a-z0-9'&-]*(?:\s+[a-z][a-z0-9'&-]*){0,2}")


def _plain_value(bare: str) -> str:
    """A value typed in lowercase words, or "": what `_shape_of` gives no shape (it reads a name by its capital)."""
    bare = re.sub(r"^(?:the|a|an|our|my|your)\s+", "", bare.strip(" .!?;,"), flags=re.I)
    if not _PLAIN.fullmatch(bare) or _CLAUSE_WORD.search(bare) or all(w in _STOP for w in bare.split()):
        return ""
    return bare


def _head_replaced(previous: str, value: str) -> tuple[int, int, str] | None:
    """Where `previous` says the thing a value in lowercase words names, with another word before it: "the red tin"
    for "blue tin", "the cricket club" for "rugby club". The one such phrase (a word and the value's last word), else None."""
    words = value.split()
    if len(words) < 2:
        return None
    head = re.escape(words[-1])
    found = [m for m in re.finditer(rf"(?<![\w'-])([\w'-]+)\s+{head}(?![\w'-])", previous, re.I)
             if m[1].lower() not in _STOP and normalise(m[0]) != normalise(value)]
    return (found[0].start(), found[0].end(), "words") if len(found) == 1 else None


def _said_instead(wrong: str, right: str, *, said: bool = False) -> str:
    """The right value of "not <wrong>, <right>", or "": one of the wrong one's shape ("not Loretta, Floriditas"), or in chat
    typed in lowercase one or two words that are no small words ("not blefa, thielmann"; not "not now, later"), dictionary
    words too ("not leeds, nottingham") when the statement before said the wrong one (`said`)."""
    right = right.strip()
    if normalise(right) == normalise(wrong):
        return ""
    if (value := _clause_value(right)) and (shape := _shape_of(value)) and shape == _shape_of(wrong):
        return value
    plain = [w for w in f"{wrong} {right}".split() if w.isalpha() and w.islower() and w not in _STOP]
    if len(right.split()) <= 2 and len(wrong.split()) <= 2 and len(plain) == len(f"{wrong} {right}".split()) \
            and (said or (not all(english(w) for w in right.split()) and not all(english(w) for w in wrong.split()))):
        return right
    return ""


# A clause that says what a thing is: "the code is RIDGE15", "our unit is 121", "the tender return date is 9 October".
_IS_VALUE = re.compile(r"^(?:(?:the|our|my|your)\s+)?[\w'-]+(?:\s+[\w'-]+){0,2}\s+(?:is|are)\s+(?P<value>.+)$", re.I)


# A value followed by its verb is the subject of a statement, not the value said: "the Ellen was booked".
_VERB_AFTER = re.compile(r"\s+(?:is|are|was|were|has|have|had|will|would|can|could|got|gets|did|does|do|been|being)\b", re.I)


def _clause_value(bare: str) -> str:
    """The value a clause without its lead-in words says: the whole of it when it is a value of at most five words,
    else one it holds (`_value_in`)."""
    return bare if bare and len(bare.split()) <= 5 and _shape_of(bare) else _value_in(bare)


def _value_in(clause: str) -> str:
    """A value a longer clause holds, or "": after "the X is" (`_IS_VALUE`); one that opens the clause with at most
    two words or a unit after it ("26 with partners", "$105/hr"; a possessive's "'s" dropped: "Yeti's trailer").
    Any other clause is a whole statement, read on its own ("WordBridge is in Cork, not Dublin")."""
    if (said := _IS_VALUE.match(clause)) and len(said["value"].split()) <= 5 and _shape_of(said["value"]):
        return said["value"].strip()
    for shape, pattern in _SHAPES:
        if shape == "name" and clause[:1].islower():
            continue
        opening = pattern.match(clause)
        after = clause[opening.end():] if opening else ""
        if opening and re.fullmatch(r"(?:/\w+|\s+[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)?", after) and not _VERB_AFTER.match(after):
            value = re.sub(r"'s$", "", opening.group(0).strip())
            if _shape_of(value) == shape or shape in ("amount", "number"):
                return value
    return ""


def amended(previous: str, correction: str, *, same_speaker: bool = True, previous_speaker: str = "", contrast: bool = True) -> str | None:
    """`previous` as `correction` says it should have been, or None when the correction is not a
    short one or names nothing in `previous` that it could replace. A name after an apology alone
    corrects only its speaker's own statement ("Sorry, John." to John is no correction). A reply
    (`Correction.reply`) to a checking question gives the statement the question checked, as corrected
    ("the deposit on the season leases is $150 right?", "$200 Nico": "the deposit on the season leases is $200").
    A correction that sets the new value beside the old one ("sorry — CROWN. ardagh was the other quote") is read by
    `contrast.contrasted` when it is not a short one of these (unless `contrast` is False)."""
    return _short_amended(previous, correction, same_speaker=same_speaker, previous_speaker=previous_speaker) \
        or (contrasted(previous, correction) if contrast else None)


def _short_amended(previous: str, correction: str, *, same_speaker: bool, previous_speaker: str) -> str | None:
    read = correction_read(correction, previous=previous, previous_speaker=previous_speaker)
    if read is None or not previous:
        return None
    if read.weak and not same_speaker and _shape_of(read.value) == "name" and not read.wrong:
        return None
    previous = re.sub(r"[’‘]", "'", previous)
    question, said, span = None, previous, None
    for question in checking_questions(previous) if read.reply else ():
        if span := _replaced_span(question, read):  # the first question the reply has a value for
            said = question
            break
    else:
        question, span = None, _replaced_span(previous, read)
    if span is None:
        return None
    start, end, shape = span
    value = _narrowed(read.value, shape)
    if value.isalpha() and value.isupper() and len(value) > 3 and said[start:end].islower():
        value = value.lower()  # "BISTO." for "biscuit": shouted, not a name of capitals
    if normalise(said[start:end]) == normalise(value):
        return None
    meant = _other_parts(said[:start] + value + said[end:], read.value, kept=(start, start + len(value)))
    return _declarative(meant, value_at=start) if question else meant


def _other_parts(meant: str, value: str, *, kept: tuple[int, int]) -> str:
    """`meant` with the other parts of a phrase of several values replaced too, each where the statement says the one of
    its shape: "friday 17th" for "thurs 16th nov" is the weekday, then the day; "WEDNESDAY night 8pm" for "Thursday night
    7pm" the weekday, then the time."""
    for shape in ("weekday", "day", "time"):
        part = [m.group(0).strip() for m in _SHAPE[shape].finditer(value)]
        if len(part) != 1 or normalise(part[0]) in normalise(meant[kept[0]:kept[1]]).split():
            continue
        said = [m for m in _spans(meant, shape) if not (kept[0] <= m[1] < kept[1])]
        if len(said) == 1 and normalise(said[0][0]) != normalise(part[0]):
            _, start, end = said[0]
            meant = meant[:start] + part[0] + meant[end:]
            kept = (min(kept[0], start), max(kept[1] + len(part[0]) - (end - start), start + len(part[0])))
    return meant


def restated(previous: str, correction: str) -> str | None:
    """`previous` with the wrong value a correction said as a whole statement names, replaced by the value the
    statement says just before it ("Small correction: the dental course is in Dundee, not Glasgow" for "off to the
    dental course in Glasgow next week"), or None. The extractor reads such a statement on its own; the answers use
    this to quote what an earlier sentence should have said."""
    text = re.sub(r"[’‘]", "'", (correction or "").strip())
    opened = _OPENING.match(text)
    if opened is None or not opened.group(0).strip() or (negated := _NOT.search(text, opened.end())) is None:
        return None
    wrong = negated["wrong"].strip()
    shape = _shape_of(wrong)
    said = _spans(text[opened.end():negated.start()], shape) if shape else []
    found = _wrong_found(re.sub(r"[’‘]", "'", previous or ""), wrong)
    if not said or found is None or normalise(said[-1][0]) == normalise(wrong):
        return None
    return previous[: found.start()] + said[-1][0] + previous[found.end():]


def answers_question(previous: str, correction: str, *, previous_speaker: str = "") -> bool:
    """Whether `correction` is a reply to a checking question of `previous` with another value (`amended` then
    gives the statement the question checked, not `previous` itself)."""
    read = correction_read(correction, previous=previous, previous_speaker=previous_speaker)
    return bool(read and read.reply and any(_replaced_span(q, read) for q in checking_questions(previous)))


def _declarative(question: str, *, value_at: int) -> str:
    """A checking question as the statement it checks: its tag and question mark dropped ("…is $200 right?"),
    a verb that opens it put back before the value ("is the standard tune $99 now?": "the standard tune is $99 now")."""
    statement = re.sub(r"\s+(?:now|still|these days|at the moment)$", "", _TAG.sub("", question).strip(), flags=re.I)
    if (inverted := _COPULA_FIRST.match(statement)) and inverted.start("subject") < value_at <= len(statement):
        subject = statement[inverted.start("subject"):value_at].strip()
        if subject:
            return f"{subject} {inverted['be'].lower()} {statement[value_at:].strip()}"
    return statement


def holds_shape(previous: str, correction: str, *, previous_speaker: str = "") -> bool:
    """Whether `previous` says something a short `correction` could be about: the wrong value it
    names, or a value of the new value's shape; or the old value of a correction that sets the new one
    beside it (`contrast.contrasted`). The statement a correction corrects is the latest
    one that does (chatter in between, "5 mins", is passed over; a statement that does but cannot
    be amended without guessing stops the search)."""
    return _holds_short(previous, correction, previous_speaker=previous_speaker) or contrasted(previous, correction) is not None


def _holds_short(previous: str, correction: str, *, previous_speaker: str) -> bool:
    read = correction_read(correction, previous=previous, previous_speaker=previous_speaker)
    if read is None or not previous:
        return False
    previous = re.sub(r"[’‘]", "'", previous)
    if read.reply and (questions := [q for q in checking_questions(previous) if _replaced_span(q, read)]):
        previous = questions[0]
    if read.wrong and _wrong_found(previous, read.wrong) is not None:
        return True
    if read.wrong and _shape_of(read.wrong) in ("name", "code", _shape_of(read.value)):
        # "sorry, I meant Snowflake, not Databricks", "sunset is 31 May, not 30 April": the statement that said the wrong
        # value, not the one just before ("I meant the 11th, thursday not wednesday" still corrects "10 July")
        return False
    shape = _shape_of(read.value)
    if shape is None or (shape == "name" and not _spans(previous, "name")):
        return (_head_replaced(previous, read.value) or _respelled(previous, read.value, spelling=read.spelling)) is not None
    if shape == "day" and not _spans(previous, "day"):
        return _day_of_date(previous) is not None
    if shape == "date" and not _spans(previous, "date") and len(_spans(previous, "month")) == 1:
        return True  # "actually from february 1" for "from january"
    return shape is not None and any(normalise(m[0]) != normalise(read.value) for m in _spans(previous, shape))


def _wrong_found(previous: str, wrong: str) -> re.Match | None:
    """Where `previous` says the wrong value a correction names ("not the 19th" is the day of "19 June")."""
    found = re.search(rf"(?<![\w]){re.escape(wrong)}(?:(?<=[a-z])s)?(?![\w])", previous, re.I)  # "not Thursday" for "Thursdays"
    if found is None and (ordinal := re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)", wrong.strip(), re.I)):
        found = re.search(rf"(?<![\w.:]){ordinal[1]}(?:st|nd|rd|th)?(?![\w:])", previous, re.I)
    return found


def _replaced_span(previous: str, read: Correction) -> tuple[int, int, str] | None:
    if read.wrong and (found := _wrong_found(previous, read.wrong)):
        end = found.end()
        if (last := read.value.split()[-1:]) and len(read.value.split()) > 1 and _shape_of(read.value) is None \
                and (following := re.match(rf"\s+{re.escape(last[0])}(?![\w'-])", previous[end:], re.I)):
            end += following.end()  # "fernhill farm, not fernleigh" for "fernleigh farm": the whole name
        return _widened(previous, found.start(), end, read.value, _shape_of(read.wrong) or "name")
    shape = _shape_of(read.value)
    if shape == "day" and not _spans(previous, "day"):
        # "no wait, it's the 24th" after "the inspection is 17 October": the day of the statement's one date
        return _day_of_date(previous)
    if shape is None:
        return _head_replaced(previous, read.value) or _respelled(previous, read.value, spelling=read.spelling)
    if not _SHAPE[shape].fullmatch(read.value.strip(" .,!?")):
        # A phrase holding values of several shapes ("WEDNESDAY night 8pm" for "Thursday night 8pm"): the first shape whose
        # value differs from the statement's one value of that shape
        for phrase_shape, pattern in _SHAPES[:_PHRASE_SHAPES]:
            if (part := pattern.search(read.value)) and len(said := _spans(previous, phrase_shape)) == 1 \
                    and normalise(said[0][0]) != normalise(part[0]):
                return said[0][1], said[0][2], phrase_shape
    if shape == "date" and not _spans(previous, "date") and len(months := _spans(previous, "month")) == 1:
        return months[0][1], months[0][2], "month"  # "from february 1" for "from january": the month said
    value = normalise(read.value)
    # (to a reply, a capital opening the statement is the sentence's, not a name's: "Thanks for your support")
    spans = [m for m in _spans(previous, shape) if normalise(m[0]) != value and not (read.reply and shape == "name" and m[1] == 0)]
    if read.reply and shape == "name" and not read.stated and not read.wrong:
        # A reply's bare word ("Holly!", but also "Wow", "Thanks") replaces only a name the reply mentions too
        # ("Hallie was the Smartwool rep").
        spans = [m for m in spans if set(normalise(m[0]).split()) & read.words]
    if shape == "name" and len(spans) > 1 and (opener := _common_opener(previous, spans[0])):
        spans = [m for m in spans if m is not opener]  # "Guest wifi is CourierGuest", then "Sorry, HarbourGuest!"
    if shape in ("name", "code") and len(spans) != 1:
        # Several names: the one the correction mentions too ("the Lokalise quote was silly"), else the one the new
        # value repeats a word of ("typo: Callum Reid" for "Callum Reed", not "Rachel Dunmore"); of several it
        # mentions, the one the value repeats a word of ("I meant the LI-7820. The 7810 doesn't measure N2O")
        repeats = [m for m in spans if set(normalise(m[0]).split()) & set(value.split())]
        spans = [m for m in spans if set(normalise(m[0]).split()) & read.words] or repeats
        if len(spans) > 1 and len(narrowed := [m for m in spans if m in repeats]) == 1:
            spans = narrowed
    elif len(spans) > 1 and (mentioned := [m for m in spans if set(normalise(m[0]).split()) & read.words]):
        spans = mentioned
    if len(spans) == 1:
        return spans[0][1], spans[0][2], shape
    if not spans and shape == "name" and (respelled := _respelled(previous, read.value, spelling=read.spelling)):
        return respelled  # "actually it's Karl with a K" for "carl berger" typed in lowercase
    if not spans and shape == "name" and not read.reply:
        # "actually it's in wms-core, we moved it out of routing": a word of the statement the correction names as the old place
        # (a reply's words are its own talk: "Wow, I love diving too" names no old value)
        for word in re.finditer(r"[\w][\w'-]*", previous):
            if word[0].lower() in read.words and word[0].lower() not in _STOP and len(word[0]) > 2:
                return word.start(), word.end(), shape
    return None


def _common_opener(previous: str, span: tuple[str, int, int]) -> tuple[str, int, int] | None:
    """`span` when it is an everyday word capitalised only as the sentence's first, opening the phrase of what the
    sentence is about ("Guest wifi is …", "Podcast name is …", "New photographer joining us …"), else None; "Slack is
    …" and "Tom said …" open with the name itself."""
    phrase, start, end = span
    if start != 0 or " " in phrase or not english(phrase.lower()):
        return None
    following = re.match(r"\s+([a-z][\w'-]*)", previous[end:])
    if following is None or following[1] in _STOP or _VERB_AFTER.match(" " + following[1]):
        return None
    return span


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
    # A number inside a date is the date's ("Dec 14. I told them 22 people": the number is 22).
    dates = [m.span() for m in _SHAPE["date"].finditer(text)] if shape == "number" else []
    for m in _SHAPE[shape].finditer(text):
        if any(start <= m.start() and m.end() <= end for start, end in dates):
            continue
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
    for shape, pattern in _SHAPES[:_PHRASE_SHAPES]:
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
