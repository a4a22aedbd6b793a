"""Rules for tastes: likes and dislikes, what someone plays, the languages they speak."""

import re

from memories.extraction.offline.context import Clause, Context, Predicate
from memories.extraction.offline.facts import fact_add
from memories.extraction.offline.values import like_items
from memories.extraction.offline.words import NOT_NAMES


_LIKE_VERBS = (
    r"love|loves|loved|adore|adores|enjoy|enjoys|enjoyed|like|likes|liked|"
    r"(?:am|is|are|was)\s+(?:(?:really|so|totally|very|super|quite|a)\s+)*(?:into|passionate about|obsessed with|crazy about|fond of|"
    r"(?:big |huge |massive |great )?fan of|in love with)|have a passion for|has a passion for|have a soft spot for"
)
_DISLIKE_VERBS = (
    r"hate|hates|hated|dislike|dislikes|detest|detests|loathe|loathes|can not stand|could not stand|"
    r"(?:am|is|are)\s+not\s+(?:a\s+)?(?:big\s+)?(?:fan of|into)"
)


def rule_likes(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    t = pred.text
    attribute = None
    if m := re.match(rf"^(?:{_DISLIKE_VERBS})\s+(?P<what>.+)$", t, re.I):
        if pred.negated:
            return False
        attribute, negated = "dislikes", False
    elif m := re.match(rf"^(?:{_LIKE_VERBS})\s+(?P<what>.+)$", t, re.I):
        if pred.negated and not pred.no_longer:
            attribute, negated = "dislikes", False  # "I don't like coffee"
        else:
            attribute, negated = "likes", pred.negated
    if not attribute:
        return False
    items = like_items(m["what"])
    for item in items:
        proper = item if item[:1].isupper() and item.split()[0].lower() not in NOT_NAMES else None
        fact_add(ctx, clause, subject, attribute, item, obj=proper, obj_kind="other", negated=negated, confidence=confidence)
    return bool(items)


def rule_plays(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    m = re.match(r"^(?:play|plays|am playing|is playing|playing)\s+(?:the\s+)?(?P<what>.+)$", pred.text, re.I)
    if not m or (pred.negated and not pred.no_longer):
        return False
    if re.match(r"^(?:with|at|in|for|a|an|some|it|that|this|around|along|games? with)\b", m["what"], re.I):
        return False
    items = like_items(m["what"])
    for item in items:
        fact_add(ctx, clause, subject, "plays", item, negated=pred.negated, confidence=confidence)
    return bool(items)


def rule_speaks(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    m = re.match(r"^(?:speak|speaks|am fluent in|is fluent in)\s+(?P<what>.+)$", pred.text, re.I)
    if not m or pred.negated:
        return False
    added = False
    for item in like_items(re.sub(r"\s+(?:fluently|a little|well)\b.*$", "", m["what"], flags=re.I)):
        if item[:1].isupper() or clause.typed_lowercase:
            fact_add(ctx, clause, subject, "speaks", item, confidence=confidence)
            added = True
    return added
