"""What a question asks for, read from its words: the attribute it is about ("where do I live?"
→ lives_in), whether it asks about the past ("did I ever", "used to"), whether it asks what
changed, and whether a line of chat is a question at all. English, rule-based, small on purpose:
retrieval works without it; it only lets the right facts be pulled in and answered directly."""

import re

from memories.extraction.lexicon import FIRST_PERSON

# A word of a question: letters and digits, with inner apostrophes ("I'm", "Caroline’s").
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

# Question words → the attributes that answer them, most specific first.
ATTRIBUTE_PATTERNS: list[tuple[re.Pattern, tuple[str, ...]]] = [
    (re.compile(r"\b(live|lives|living|lived|reside|resides|home|hometown|city|address|moved?)\b", re.I), ("lives_in",)),
    (re.compile(r"\b(job|jobs|work|works|working|worked|employer|company|role|position|title|occupation|profession|career|for a living)\b", re.I), ("role", "works_at")),
    (re.compile(r"\b(pets?|dogs?|cats?)\b", re.I), ("has_pet",)),
    (re.compile(r"\b(like|likes|love|loves|enjoy|enjoys|hobby|hobbies|fan of|into|play|plays|playing)\b", re.I), ("likes", "loves", "enjoys", "hobby", "plays")),
    (re.compile(r"\b(study|studies|studied|school|university|college)\b", re.I), ("studies_at",)),
    (re.compile(r"\b(speak|speaks|language|languages)\b", re.I), ("speaks",)),
    (re.compile(r"\b(age|old)\b", re.I), ("age",)),
]

_HISTORY = re.compile(
    r"\b(ever|used to|before|previous|previously|formerly|former|in the past|history|originally|anymore|no longer)\b", re.I
)
_CHANGE = re.compile(r"\b(changed?|changes|what'?s new|new|updated?|different)\b", re.I)
_QUESTION_START = re.compile(
    r"^\s*(who|whom|whose|what|when|where|why|how|which|do|does|did|is|are|was|were|am|can|could|should|would|will|"
    r"have|has|had|tell me|show me|list|remind me)\b",
    re.I,
)


def attributes_asked(question: str) -> tuple[str, ...]:
    for pattern, attributes in ATTRIBUTE_PATTERNS:
        if pattern.search(question):
            return attributes
    return ()


def asks_history(question: str) -> bool:
    return bool(_HISTORY.search(question))


def asks_changes(question: str) -> bool:
    return bool(_CHANGE.search(question))


def is_question(text: str) -> bool:
    """A line of chat is a question when it ends with '?' or starts like one."""
    return text.rstrip().endswith("?") or bool(_QUESTION_START.match(text))


def words(text: str) -> list[str]:
    return WORD.findall(text)


def first_person_words(text: str) -> set[str]:
    """The words of `text` by which a speaker names themself ("I", "my", "I'm" → its "i")."""
    found = set()
    for word in words(text.casefold().replace("’", "'")):
        if word in FIRST_PERSON:
            found.add(word)
        elif word.split("'")[0] in FIRST_PERSON:
            found.add(word.split("'")[0])
    return found


def mentions_first_person(text: str) -> bool:
    return bool(first_person_words(text))
