"""Cutting a value out of a predicate: a place or a name, a job title, a plain value, a list of tastes."""

import re

from memories.extraction.offline.context import Clause
from memories.extraction.offline.words import DETERMINERS, JOBS, NOT_NAMES, NOT_PROPER

_BOUNDARY = re.compile(
    r"\s+(?:as|in|at|for|from|to|with|since|on|and|but|because|after|before|when|while|where|who|which|that|"
    r"so|then|until|during|by|near|last|this|next|ago|anymore|any more|too|again|yet|though|although|if|or|"
    r"right|here|there|lately|now|today|yesterday|every|each|these|nowadays|whenever|like|full-time|part-time|over|via|through|"
    r"instead|into|onto|originally|mostly|mainly|usually|normally|generally|basically|probably|apparently|hopefully|"
    r"temporarily|permanently|officially|technically|presumably|obviously|most|ever|btw|tbh|fyi|imo|lol|please|pls)\b(?!-)"
    r"|[,;:!?()\"]|(?<!\bSt)(?<!\bMt)(?<!\bDr)(?<!\bFt)\.(?:\s|$)|\s+-+\s+",
    re.I,
)


# Words that place a thing relative to another ("next to", "behind", "opposite"): no name, and no value alone.
_RELATIVE_PLACES = frozenset("next near behind opposite beside besides above below under underneath inside outside across around "
                             "between beyond past alongside".split())


def cut_value(text: str) -> str:
    """The value at the start of `text`, up to the first preposition, conjunction or punctuation."""
    text = text.strip()
    match = _BOUNDARY.search(text, 1) if text else None
    return (text[: match.start()] if match else text).strip(" .,'\"")


def proper_name(value: str, clause: Clause, *, name: bool = False, allow_lowercase: bool = True) -> str | None:
    """A place, organisation or name: capitalised (or any word in all-lowercase chat), short,
    not a description ("a startup", "my place")."""
    value = re.sub(r"^the\s+", "", value.strip(), flags=re.I).strip(" .,'\"")
    words = value.split()
    if not words or len(words) > 6 or len(value) > 80 or re.search(r"'s\s+[a-z]", value):
        return None  # too long, or a possessive description ("Taylor's house")
    first = words[0].lower()
    if first in DETERMINERS or first in {"the", "being", "getting", "going"} or first in _RELATIVE_PLACES:
        return None
    if value[0].isupper() or value[0].isdigit():
        if name and first in NOT_NAMES:
            return None
        return value
    if allow_lowercase and clause.typed_lowercase and not name and first not in NOT_PROPER and len(words) <= 4:
        return value
    return None


def said_as_name(value: str | None, clause: Clause) -> bool:
    """A value said as a name: capitalised, or a number ("1Password"), or any word but a small one in chat typed
    all in lowercase ("we switched to circuit for route planning"), where no name has its capital."""
    if not value:
        return False
    if value[:1].isupper():
        return True
    if value[:1].isdigit():  # "1Password", "3CX"; not a day ("the 25th") nor a count
        return bool(re.match(r"\d+[a-z]", value, re.I)) and not re.match(r"\d+(?:st|nd|rd|th|am|pm|[kmh]|ft|lb|kg|km|mins?|hrs?)\b", value, re.I)
    return clause.typed_lowercase and value.split()[0].lower() not in NOT_NAMES | NOT_PROPER | DETERMINERS


# Small words inside a place's name ("Barton upon Humber", "Stratford-upon-Avon", "Isle of Man").
_PLACE_JOINERS = frozenset("of upon on de la le les du des del der den am im in the and sur en y".split())


def place_name(value: str, clause: Clause, *, trim: bool = False) -> str | None:
    """A town or a district someone lives in: a proper name whose words are all capitalised (or
    joiners), so "Plarad torque tools", a name with common nouns after it, is a thing and no home
    ("we're moving to Plarad torque tools"). `trim`, where the verb says a place ("based in the Kraków
    office"): the name before the common nouns. Chat typed all in lowercase is taken as it is."""
    place = proper_name(value, clause)
    if place is None or clause.typed_lowercase:
        return place
    words = place.split()
    common = next((i for i, w in enumerate(words) if i and not (w[:1].isupper() or w[:1].isdigit() or w.lower() in _PLACE_JOINERS)), None)
    if common is None:
        return place
    return " ".join(words[:common]) if trim and words[common - 1].lower() not in _PLACE_JOINERS else None


# Job titles said as "<title> of <department>".
_TITLES_OF = frozenset("head director chief vp manager".split())


def job_title(text: str, *, strict: bool = False) -> str | None:
    """A job title: "a software engineer" → "software engineer". `strict` wants a job word."""
    text = cut_value(text)
    text = re.sub(r"^(?:a|an|the|my|his|her|their|our)\s+", "", text, flags=re.I).strip()
    text = re.sub(r"^(?:new|first|current)\s+", "", text, flags=re.I)
    words = text.split()
    if not words or len(words) > 6 or words[0].lower() in DETERMINERS | CHATTY_OBJECTS:
        return None
    head = words[-1]
    if "of" in words[1:] and words[words.index("of") - 1].lower() in _TITLES_OF and words[words.index("of") + 1:][:1] != ["the"]:
        head = words[words.index("of") - 1]  # "Director of Operations", "head of ops" (not "the head of the Leeds office": who leads it)
    if strict and head.lower().rstrip("s") not in JOBS and head.lower() not in JOBS:
        return None
    if not re.match(r"^[\w][\w .&/+'-]*$", text):
        return None
    return text


def plain_value(text: str, *, max_words: int = 6) -> str | None:
    text = cut_value(text) if len(text.split()) > max_words else text.strip(" .,'\"")
    text = re.sub(r"^(?:a|an)\s+", "", text, flags=re.I).strip()
    words = text.split()
    if not words or len(words) > max_words:
        return None
    if words[0].lower() in DETERMINERS | {"so", "very", "really", "pretty", "too", "going", "getting", "doing", "not", "quite"}:
        return None
    if len(words) == 1 and words[0].lower() in _RELATIVE_PLACES:
        return None  # "next" cut from "next to the canteen": the phrase says where, the word alone nothing
    return text


def snake_case(text: str) -> str:
    return "_".join(re.sub(r"[^a-z0-9 ]", " ", text.lower().replace("favourite", "favorite")).split())


_LIKE_CUT = re.compile(
    r"\s+(?:so much|a lot|very much|too|as well|because|when|whenever|since|but|though|although|with|on|at|in|every|"
    r"each|during|after|before|if|while|in the|these days|nowadays|lately|more than|than|right now|at the moment|"
    r"now|again|anymore|any more|ever since|from|for|here|there|which|that|who)\b|[,;:!?()\"]|\.(?:\s|$)",
    re.I,
)
CHATTY_OBJECTS = set(
    "it that this you them him her me us what how when where why who which so being to the idea hearing seeing "
    "knowing talking chatting your his their our catching meeting sharing hanging spending".split()
)
_CHATTY_VERBS = set(
    "be hear see know think say tell talk help ask get have make do go meet try share chat catch thank "
    "keep find check let give take".split()
)


# A taste never starts with a verb or a bare preposition.
_NOT_A_TASTE = set("is are was were be been has have had can will would does did in on at of for about by as".split())


def like_items(what: str) -> list[str]:
    """"playing football and tennis" → [football, tennis]; "to cook" → cooking."""
    cut = _LIKE_CUT.search(what)
    text = what[: cut.start()] if cut else what
    text = text.strip()
    if not text:
        return []
    words = text.split()
    if words[0].lower() in CHATTY_OBJECTS and words[0].lower() not in {"the", "to"}:
        return []
    if words[0].lower() in _NOT_A_TASTE:
        return []  # "Unconditional love is so important": "love" was a noun, not the verb
    if re.match(r"^(?:the|this|that)\s+(?:new|same|way|idea|fact|one|thing|part|rest|moment)\b", text, re.I):
        return []  # points at something in the conversation, not a taste
    if words[0].lower() == "to":
        if len(words) < 2 or words[1].lower() in _CHATTY_VERBS:
            return []
        text = " ".join([_gerund(words[1])] + words[2:])
    items = []
    for raw in re.split(r"\s*,\s*|\s+and\s+|\s+&\s+|\s+or\s+", text):
        item = re.sub(r"^(?:playing|play)\s+", "", raw.strip(), flags=re.I)
        item = re.sub(r"^(?:the|a|an|some)\s+", "", item, flags=re.I).strip(" .'")
        if not item or len(item.split()) > 5 or item.split()[0].lower() in DETERMINERS | CHATTY_OBJECTS:
            continue
        if item.split()[0].lower() in {"hearing", "seeing", "talking", "chatting", "knowing", "meeting"}:
            continue
        items.append(item)
    return items


def _gerund(verb: str) -> str:
    verb = verb.lower()
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.match(r"^[^aeiou]*[aeiou][bdgmnprt]$", verb) and len(verb) <= 4:
        return verb + verb[-1] + "ing"  # run → running, swim → swimming
    return verb + "ing"
