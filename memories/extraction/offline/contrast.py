"""A correction that says the new value and names the old one as something else.

Chat often corrects a statement not by ellipsis ("sorry, 150") but by setting the two values side by
side: "sorry sorry — CROWN. ardagh was the other quote" after "new can supplier from september is
ardagh"; "it's fernwood studio 🙃 studio fern is the florist on main st" after "we've hired studio
fern for the logo refresh"; "no wait, sports day is moving indoors at the Leisure Centre, Heath Park
flooded" after "sports day is friday 3 july at Heath Park". `contrasted` reads such a
message against the statement before it: the old value is a phrase of the statement that the
correction mentions again outside the new value's clause (or after "not"); the new value is what
the correction says it is ("it's …", "I meant …", "… is called …", a shouted word, a bare first
clause), or else what follows the same word that comes before the old value in the statement ("at
Heath Park" → "at the Leisure Centre"). The statement with the old value replaced is what the speaker
meant, read by the extractor and the answers like any other (`amend.amended` falls back to it).

It needs the old value named as wrong (after "not", or set apart as the other thing: "… was last
year's quote", "… is the tile place", "why did I say …"), or else a word that marks a correction
("correction", "I meant", "no wait", "scratch that", an opening "sorry" …) with an old value that
looks like one (a number, a name, a weekday or a month). It says nothing when the old value is not
found once in the statement, the new value is already there, or the message is longer than a line
or two.
"""

import re
from functools import lru_cache

from memories.extraction.offline.words import CLAUSE_WORDS, MONTHS, SMALL_WORDS, WEEKDAYS

# A correction is a line or two (as the extractor's AMEND_LONGEST): a longer message is read on its own, and the answers
# never scan a pasted document for one.
LONGEST = 400

# Words that mark a message as correcting something said before it, wherever they are.
_SIGNAL = re.compile(
    r"\b(?:correction|corrected|autocorrect(?:ed)?|typo|i meant|no wait|wait no|scratch that|my mistake|misspoke|"
    r"ignore (?:that|me|my last)|why did i say|fell through|renamed|make that|got (?:it|that) wrong|wrong way round)\b"
    # an apology or "actually" opening it ("sorry sorry — CROWN", "no sorry, the dealer swapped it"), not "sorry to hear"
    r"|^\W*(?:(?:omg|ugh|oh|ah|no|nope|lol|ok|okay|wait)\W+)*(?:sorry|oops|my bad|actually|wrong \w+)\b(?!\s+(?:to|for|about|if|that|but|i|you))",
    re.I,
)
# A value shouted in capitals: "BRISKET.", "CROWN", "yachtmaster OFFSHORE".
_SHOUT = re.compile(r"(?<![\w'])[A-Z][A-Z'-]{2,}(?:\s+[A-Z][A-Z'-]{1,})*(?![\w'])")
# What says the new value: "it's a yamaha", "I meant the pilchard press", "the stout is called ember moor now".
_INTRO = re.compile(
    r"\b(?:it'?s|it is|it'll be|it will be|i meant|i mean|(?:his|her|their|its|the) name(?:'s| is)|called|"
    r"we'?re (?:at|in|with|using|going with|staying with|sticking with)|we are (?:at|in|with|using)|going with|staying with|"
    r"sticking with|should be|should have been|make that|(?:we'?ve |we have |we )?(?:moved|switched|changed|gone over) to|went with|"
    r"gone with|we'?re going to|we are going to|(?:is|are|it'?s) now)\s+(?:actually\s+)?(?:(?:the|a|an)\s+)?",
    re.I,
)
# Words that end a value said after its lead-in: "unity trust bank from 1 september", "the EAST slip that's wrecked".
_VALUE_END = re.compile(
    r"(?:that|that'?s|which|who|from|for|now|instead|again|this|next|not|and|but|because|so|as|after|since|until|"
    r"on the|in the|at the|is|are|was|were|has|have|had|will|i|we|you|he|she|they|btw|lol|though|too|then|yet|anyway|still|"
    r"his|her|my|our|their|your|me|him|them|us)\b",
    re.I,
)
_STOP = SMALL_WORDS | {"he", "she", "they", "his", "her", "their", "them", "us"}
_CLAUSE_WORD = re.compile(rf"\b(?:{'|'.join(CLAUSE_WORDS + ('said', 'say'))})\b", re.I)
# What opens a clause without being part of a value: "sorry", "no wait", "correction:", "omg", "so" (matched at a
# clause's start).
_OPENERS = re.compile(
    r"(?:(?:omg|ugh|argh|oh|ah|lol|ok|okay|no|nope|yes|yeah|right|sorry|wait|so|and|but|well|oops|my bad|correction|"
    r"update|typo|autocorrect|fine|correct)\b[\s,!]*)+",
    re.I,
)
_WORD = re.compile(r"[\w][\w'&+-]*")
# How a friendly reply opens: no value.
_GREETING = re.compile(r"(?:hey|hi|hiya|hello|wow|aww+|thanks|thank|ty|yay|haha\w*|cool|great|nice|awesome|congrats|amazing|"
                       r"lovely|welcome|morning|evening|night|cheers|good|yes|yeah|yep|absolutely|totally|definitely|sure)\b", re.I)


def marked(text: str) -> bool:
    """Whether `text` may be read by `contrasted` as a correction (what the extractor asks before it looks up the
    statements before a message): a word that marks one, or a value said (after a lead-in, or shouted) beside "not"
    or an old value set apart ("it's unit 6 on the paperwork tomas. unit 4 is the tile place")."""
    text = text or ""
    return bool(_SIGNAL.search(text) or ((_INTRO.search(text) or _SHOUT.search(text))
                                         and (re.search(r"\bnot\b", text, re.I) or _SET_APART.search(text))))


def _clauses(text: str) -> list[tuple[int, int]]:
    """The spans of `text`'s clauses: split at sentence marks, colons, dashes, brackets, commas and emoji."""
    spans, start = [], 0
    for cut in re.finditer(r"[.!?;:()]+(?:\s+|$)|\s+[—–-]+\s+|,\s+|[^\w\s,.;:!?'&£$€%+/-]+", text):
        if cut.start() > start:
            spans.append((start, cut.start()))
        start = cut.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _words(text: str) -> list[tuple[str, int, int]]:
    """The words of `text`, in lower case, a possessive's "'s" dropped ("gull cove's" is "gull cove")."""
    return [(re.sub(r"'s$", "", m[0].lower()).strip("'"), m.start(), m.end()) for m in _WORD.finditer(text)]


def _small(word: str) -> bool:
    """A word no value is made of: a small word, or a contraction ("we're", "that's", "won't")."""
    return word in _STOP or "'" in word


def _value_after(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The value said from `start` to the clause's end at `end`: up to five words, stopped by a word that opens
    another part of the sentence (`_VALUE_END`)."""
    words = []
    for match in _WORD.finditer(text, start, end):
        if _VALUE_END.match(text, match.start()) or len(words) == 5:
            break
        words.append(match)
    if not words:
        return None
    return words[0].start(), words[-1].end()


def _new_value(text: str, clauses: list[tuple[int, int]]) -> tuple[int, int, tuple[int, int], bool] | None:
    """Where `text` says the new value, with the clause it is in: the first said after a lead-in ("it's …") or
    shouted ("CROWN."), else a bare first clause of at most three words ("thielmann. right."), said so (True)."""
    found = []
    for start, end in clauses:
        for intro in _INTRO.finditer(text, start, end):
            if value := _value_after(text, intro.end(), end):
                found.append((value[0], -(value[1] - value[0]), value[1], (start, end)))
        for shout in _SHOUT.finditer(text, start, end):
            if shout[0] not in _NOT_SHOUTED:
                found.append((shout.start(), -(shout.end() - shout.start()), shout.end(), (start, end)))
    if found:
        first = min(found)
        return first[0], first[2], first[3], False
    for start, end in clauses:
        opener = _OPENERS.match(text, start, end)
        first = opener.end() if opener else start
        bare = text[first:end].strip()
        if not bare or _SIGNAL.search(bare):
            continue  # "Small correction:", "sorry wrong name": the word of correction, not the value
        if _GREETING.match(bare):
            return None  # "Wow", "Hey Jon", "Thanks, Mel": a reply's talk
        if len(bare.split()) <= 3 and not _CLAUSE_WORD.search(bare) and not all(_small(w) for w in bare.lower().split()):
            return first, first + len(text[first:end].rstrip()), (start, end), True
        return None  # the first clause with words says something else
    return None


# Capitals that are no value: chat's abbreviations.
_NOT_SHOUTED = frozenset("OK OMG LOL FYI BTW NOT ASAP TBH IMO PS NB AM PM".split())


def _old_value(previous: str, text: str, *, outside: tuple[int, int], value: str,
               clauses: list[tuple[int, int]]) -> tuple[int, int, bool] | None:
    """The phrase of `previous` (one to three words, not all small words) that `text` says again outside the clause
    `outside` of the new value (or in it after "not": "THURSDAY not tuesday"), and not as still so ("still 19
    October"): the longest, said once in `previous`, a number for a number and words for words; the one after "not"
    first. With whether `text` sets it apart in a clause of its own, opening it before a verb ("unit 4 is the tile
    place", "the suzuki was the quote we didn't take").
    """
    said = _words(previous)
    heard = _words(text)
    negated = [i for i, w in enumerate(heard) if w[0] == "not" and outside[0] <= w[1] < outside[1]]
    mentioned = [w for i, w in enumerate(heard)
                 if not (outside[0] <= w[1] < outside[1]) or any(n <= i <= n + 4 for n in negated)]
    spoken = [w[0] for w in mentioned]
    opening = set()  # where a clause's first words (after "the") are
    for start, end in clauses:
        inside = [i for i, w in enumerate(mentioned) if start <= w[1] < end]
        while inside and spoken[inside[0]] in ("the", "a", "an", "and", "but", "so", "our"):
            inside = inside[1:]
        if inside:
            opening.add(inside[0])
    kept = {w[0] for w in _words(value)}
    numeric = any(ch.isdigit() for ch in value)
    found = []
    for size in (3, 2, 1):
        for index in range(len(said) - size + 1):
            run = [w[0] for w in said[index:index + size]]
            if _small(run[0]) or _small(run[-1]) or set(run) <= kept:
                continue
            if size == 1 and len(run[0]) < 3 and not any(ch.isdigit() for ch in run[0]):
                continue  # "ok", "pm": too short to be a value, unless it holds a digit ("4B", "9")
            if value and any(ch.isdigit() for ch in "".join(run)) != numeric:
                continue  # a number stands for a number, words for words
            at = [i for i in range(len(spoken) - size + 1) if spoken[i:i + size] == run and (i == 0 or spoken[i - 1] != "still")]
            if not at:
                continue
            if sum(1 for i in range(len(said) - size + 1) if [w[0] for w in said[i:i + size]] == run) != 1:
                continue  # said more than once: which one is meant is not clear
            # after "not" ("THURSDAY not tuesday", "a 25 kW not a 30")
            after_not = any(i > 0 and spoken[i - 1] in ("not", "a", "an", "the") and "not" in spoken[max(0, i - 2):i] for i in at)
            apart = any(i in opening and _SET_APART.match(text, mentioned[i + size - 1][2]) for i in at) \
                or any(i > 0 and spoken[i - 1] in ("say", "said") and "why" in spoken[max(0, i - 4):i] for i in at)  # "PORTO. why did i say lisbon??"
            found.append((after_not, apart, size, -index, said[index][1], said[index + size - 1][2]))
        if found:
            break
    if not found:
        return None
    best = max(found)
    start, end = best[4], best[5]
    if best[0] or best[1]:
        return start, end, True  # after "not", or set apart as the other thing: "west slip's fine", whatever its words
    # Else (a word of correction alone) the old value must look like one ("happy new year" names none): a number, a name
    # (a capital inside the statement, or a word no dictionary holds: "nobivac", "triodos"), a weekday or a month.
    return (start, end, False) if _value_like(previous, start, end) else None


def _value_like(previous: str, start: int, end: int) -> bool:
    """Whether the words of `previous` from `start` to `end` look like a value, not talk: a number, a name (capitalised
    other than as the first word of a sentence, or no English word), a weekday or a month."""
    from memories.extraction.offline.truecase import english

    for match in _WORD.finditer(previous, start, end):
        word = match[0]
        first = not previous[: match.start()].strip() or re.search(r"[.!?:]\s*$", previous[: match.start()])
        if any(ch.isdigit() for ch in word) or (word[:1].isupper() and not first) or not english(word.lower()) \
                or _CALENDAR.fullmatch(word):
            return True
    return False


_CALENDAR = re.compile(rf"(?:{'|'.join(WEEKDAYS)})s?|{'|'.join(MONTHS)}", re.I)


# What follows an old value set apart in a clause of its own, as the other or the old thing: "ADT was last year's
# quote", "unit 4 is the tile place", "shearwater lost by 2 votes", "west slip's fine", "Nandos was full".
_SET_APART = re.compile(
    r"(?:'s|\s+(?:is|was|are|were))\s+(?!the\s+(?:best|worst|most|greatest|biggest|same)\b)"  # praise, not the other thing
    r"(?:the|last|other|old|only|just|two|three|\d|full|closed|shut|dead|fine|gone|cancelled|"
    r"dropped|scrapped|binned|ditched|replaced|out|over|finished|booked|double|wrong)\b"
    r"|\s+(?:lost|fell through|only did|didn'?t|never|got (?:pulled|dropped|cancelled|scrapped|binned)|fine|dead|shut|closed|full|gone|"
    r"cancelled)\b",
    re.I,
)
# The first word of talk after "it's", not of a value.
_CHATTY = re.compile(
    r"(?:always|really|so|such|great|good|fine|nice|amazing|awesome|hard|tough|fun|just|pretty|very|too|all|been|also|still|"
    r"lovely|cool|true|okay|ok|important|possible|best|worth|time|about|like|not|no|what|how|going|getting|one|something|"
    r"nothing|everything|definitely|totally|probably|quite|kind|sort|super|crazy|wild|easy|interesting|tricky|beautiful|wonderful|"
    r"perfect|fantastic|incredible|brilliant|cute|sweet|sad|funny|hilarious|exciting|scary|weird|strange|way|part|fine)\b",
    re.I,
)


def _aligned(previous: str, old: tuple[int, int], text: str, clauses: list[tuple[int, int]]) -> tuple[int, int, tuple[int, int], bool] | None:
    """The new value said after the same word that comes before the old one in `previous` ("… at Heath Park" →
    "… at the Leisure Centre"), in a clause that does not mention the old value."""
    before = [w for w in _words(previous[: old[0]]) if w[0] not in ("the", "a", "an")]
    if not before or before[-1][0] not in ("at", "in", "to", "with", "by", "on"):
        return None
    lead = before[-1][0]
    old_words = {w[0] for w in _words(previous[old[0]:old[1]])}
    for start, end in clauses:
        if old_words & {w[0] for w in _words(text[start:end])}:
            continue
        for match in re.finditer(rf"\b{re.escape(lead)}\s+(?:(?:the|a|an)\s+)?", text[start:end], re.I):
            if re.search(r"\b(?:is|are|was|were)\s+$", text[start:start + match.start()], re.I):
                break  # a whole statement ("WordBridge is in Cork"), read on its own
            if value := _value_after(text, start + match.end(), end):
                return value[0], value[1], (start, end), False
    return None


@lru_cache(maxsize=2048)
def contrasted(previous: str, correction: str) -> str | None:
    """`previous` as `correction` says it should have been, when the correction sets a new value beside the old one
    (see the module's docstring), or None."""
    text = re.sub(r"[’‘]", "'", (correction or "").strip())
    previous = re.sub(r"[’‘]", "'", previous or "")
    if not text or not previous or len(text) > LONGEST:
        return None
    signalled = bool(_SIGNAL.search(text))
    clauses = _clauses(text)
    new = _new_value(text, clauses)
    if new is not None:
        value = text[new[0]:new[1]].strip(" '")
        old = _old_value(previous, text, outside=new[2], value=value, clauses=clauses)
    else:
        old = None
        for start, end in clauses:  # no value said as one: the old value first, then what stands in its place
            candidate = _old_value(previous, text, outside=(start, end), value="", clauses=clauses)
            if candidate and (new := _aligned(previous, candidate, text, clauses)):
                old, value = candidate, text[new[0]:new[1]].strip(" '")
                break
    if old is None or not value or not (signalled or old[2]) or (new is not None and new[3] and not old[2]):
        # no word of correction, nor the old value set apart from the new ("not …", "ADT was last year's quote"); a bare
        # first clause is a value only beside an old one set apart ("Oops, sorry 'bout the accident!" is talk)
        return None
    if _CHATTY.match(value):
        return None  # "it's always fun …", "it's great": talk, not a value
    value = re.sub(r"^(?:the|a|an)\s+", "", value, flags=re.I)
    start, end = old[:2]
    # The words the value shares with the statement around the old one are the statement's: "60 lengths of 22mm" for
    # "40" in "ordered 40 lengths of 22mm" is "60", "yachtmaster OFFSHORE" for "coastal" in "yachtmaster coastal" is "OFFSHORE".
    words, before, after = _words(value), [w[0] for w in _words(previous[:start])], [w[0] for w in _words(previous[end:])]
    lead = max((k for k in range(len(words)) if k <= len(before) and [w[0] for w in words[:k]] == before[len(before) - k:]), default=0)
    trail = max((k for k in range(len(words) - lead) if [w[0] for w in words[len(words) - k:]] == after[:k] and k <= len(after)), default=0)
    value = value[words[lead][1]:words[len(words) - trail - 1][2]]
    said_value = {w[0] for w in _words(value)}
    if not said_value or said_value <= {w[0] for w in _words(previous)}:
        return None  # nothing new: the value is the old one, or said in the statement already
    if start and value[:1] in "£$€" and previous[start - 1] == value[0]:
        value = value[1:]  # "£52" for the "48" of "£48"
    if value.isupper() and len(value) > 3 and previous[start:end].islower():
        value = value.lower()  # shouted, not a name of capitals
    return previous[:start] + value + previous[end:]
