"""What a question asks for, read from its words: the attribute it is about ("where do I live?"
→ lives_in), whether it asks about the past ("did I ever", "used to"), whether it asks what
changed, and whether a line of chat is a question at all. English, rule-based, small on purpose:
retrieval works without it; it only lets the right facts be pulled in and answered directly."""

import re

from memories.extraction.lexicon import FIRST_PERSON

# A word of a question: letters and digits, with inner apostrophes ("I'm", "Caroline’s").
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

# "Who owns billing?", "who leads the platform team?", "who reports to Priya?": the subject is
# asked for, by the value of its fact.
REVERSE_PATTERNS: list[tuple[re.Pattern, tuple[str, ...]]] = [
    (re.compile(r"^\s*who(?:'s|’s)?\s+(?:owns|owned|maintains|maintained|(?:is|was|'s|’s)?\s*(?:responsible\s+for|in\s+charge\s+of|the\s+owner\s+of)|"
                r"took\s+over|looks\s+after|looked\s+after|handles|handled|takes\s+care\s+of|(?:is|was)\s+looking\s+after)\s+(?P<what>.+?)\s*\??$", re.I), ("owns", "leads")),
    (re.compile(r"^\s*who\s+(?:leads|led|heads|headed|(?:is|was)\s+(?:the\s+)?(?:lead|head|leader)\s+of)\s+"
                r"(?P<what>.+?)\s*\??$", re.I), ("leads",)),
    # "who runs the Discord server?": whoever leads it, else whoever owns it ("… is mine to run")
    (re.compile(r"^\s*who\s+(?:runs|ran|manages|managed|does|did|is\s+doing|takes\s+care\s+of)\s+(?P<what>.+?)\s*\??$", re.I), ("leads", "owns")),
    (re.compile(r"^\s*who\s+(?:reports|reported)\s+to\s+(?P<what>.+?)\s*\??$", re.I), ("reports_to",)),
    # "Who is the iOS lead?", "who's our head of design?": the person whose role it is
    (re.compile(r"^\s*who(?:'s|’s|\s+is|\s+was)\s+(?:the|our|their)\s+(?P<what>.+?)\s*\??$", re.I), ("role",)),
]
# Asked before the vocabulary of the scope is looked at (question_attributes in answer.py):
# relations whose words would otherwise match another attribute ("maya's lead" is not leads).
PRIORITY_PATTERNS: list[tuple[re.Pattern, tuple[str, ...]]] = [
    # "report(s)" of a person, not "crash reports" or "bug reports" (things that go somewhere)
    (re.compile(r"\b(manager|managers|boss|supervisor|(?<!crash )(?<!bug )(?<!error )reporting|reported|manages|managed)\b|(?<!crash )(?<!bug )(?<!error )(?<!expense )"
                r"(?<!status )\breports?\b|'s\s+lead\b", re.I), ("reports_to",)),
    (re.compile(r"\b(hate|hates|hated|dislike|dislikes|disliked|can'?t stand)\b", re.I), ("dislikes",)),
]
# What someone likes or does for fun, by the attributes that hold it.
TASTES = ("likes", "loves", "enjoys", "hobby", "plays")
# Question words → the attributes that answer them, most specific first.
ATTRIBUTE_PATTERNS: list[tuple[re.Pattern, tuple[str, ...]]] = [
    # "where's lena from?", "which city is Dev originally from?", "where does Ana come from?": one person's origin, not
    # their home (a question with no one named is no one's origin: the subject is one word before "from")
    (re.compile(r"^\s*(?:where|which\s+(?:city|town|country|village|place|part\s+of\s+\w+)|what\s+(?:city|town|country|village))"
                r"(?:'s|’s|\s+is|\s+was|\s+does|\s+did)\s+[A-Za-z][\w\-]+(?:'s|’s)?\s+(?:originally\s+)?(?:come\s+|hail\s+)?from\s*\??\s*$", re.I),
     ("is_from", "grew_up_in", "born_in")),
    (re.compile(r"(?<!\bgo )(?<!\bgoes )(?<!\bwent )(?<!\bgone )\b(live|lives|living|lived|reside|resides|based|home|hometown|city|address|moved?)\b", re.I), ("lives_in",)),
    # "what does Liesel do outside work?", "what sport did Felix take up?": a pastime (before "work" asks for a job)
    (re.compile(r"\b(free time|spare time|for fun|outside (?:of )?work|pastimes?|hobby|hobbies|sports?|martial arts?|"
                r"take up|takes up|took up|taken up|taking up|to (?:relax|unwind))\b", re.I), TASTES),
    (re.compile(r"\b(job|jobs|work|works|working|worked|employer|company|role|position|title|occupation|profession|career|for a living)\b", re.I), ("role", "works_at")),
    (re.compile(r"\b(pets?|dogs?|cats?)\b", re.I), ("has_pet",)),
    (re.compile(r"\b(like|likes|love|loves|enjoy|enjoys|fan of|into|play|plays|playing)\b", re.I), TASTES),
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


def reverse_asked(question: str) -> tuple[tuple[str, ...], str] | None:
    """(attributes, the value named) for "who owns the billing service?", else None."""
    for pattern, attributes in REVERSE_PATTERNS:
        if m := pattern.match(question):
            return attributes, m["what"]
    return None


def priority_attributes(question: str) -> tuple[str, ...]:
    for pattern, attributes in PRIORITY_PATTERNS:
        if pattern.search(question):
            return attributes
    return ()


def attributes_asked(question: str) -> tuple[str, ...]:
    for pattern, attributes in PRIORITY_PATTERNS + ATTRIBUTE_PATTERNS:
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
