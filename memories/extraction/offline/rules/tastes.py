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


# What someone does for fun (likes), said by the verb that starts it: "I've taken up bouldering", "took up the cello",
# "I started bouldering", "started doing Brazilian jiu-jitsu twice a week"; or by what they call themselves: "I'm a
# massive chess nerd". Work's gerunds are no pastime ("I started onboarding", "we started testing").
_TAKE_UP = re.compile(r"^(?:took|take|takes|am taking|is taking|taking)\s+up\s+(?P<what>.+)$", re.I)
_STARTED = re.compile(r"^(?:started|start|began|am starting|is starting)\s+(?:(?:doing|practi[cs]ing)\s+(?P<what>.+)|(?P<gerund>[a-z][a-z\-]+ing))"
                      r"(?P<rest>\s+.*)?$", re.I)
_NERD = re.compile(r"^(?:am|is|are)\s+(?:a\s+)?(?:(?:massive|huge|big|total|complete|real|proper|bit of a|keen|avid)\s+)*"
                   r"(?P<what>[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?)\s+(?:nerd|geek|fanatic|buff|addict|junkie|enthusiast)$", re.I)
# What follows a pastime and is not part of it: how often, since when, where, with whom.
_PASTIME_TAIL = re.compile(r"\s+(?:twice|once|three times|every|each|on|at|in|most|again|this|last|with|for|since|recently|lately|"
                           r"seriously|now|properly|a lot|regularly|which|and|but|so)\b.*$", re.I)
_SINCE_STARTED = re.compile(r"\b(?:since|when|after|before|until|once)\s+(?:i|he|she|they|we)\s+(?:have\s+|'ve\s+|had\s+)?(?:started|began|took up)\b", re.I)
_NOT_A_PASTIME = frozenset(
    "a an the my our your his her their this that these those it them some more any space time room position role job offer slack "
    "work working onboarding testing using looking planning packing moving prepping interviewing recruiting hiring building "
    "shipping deploying migrating reviewing drafting writing-up sending booking charging invoicing billing getting going doing "
    "making having taking trying thinking wondering feeling".split()
)


def rule_hobby(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    if pred.negated or subject == ctx.team or _SINCE_STARTED.search(ctx.sentence):
        return False  # "how far I've come since I started transitioning": a time, not a pastime
    t = pred.text
    if m := _TAKE_UP.match(t):
        what = m["what"]
    elif (m := _STARTED.match(t)) and (m["what"] or not (m["rest"] or "").strip() or _PASTIME_TAIL.match(m["rest"])):
        what = m["what"] or m["gerund"]  # a gerund with an object is work or a chore ("started using Notion")
    elif m := _NERD.match(t):
        what = m["what"]
    else:
        return False
    what = _PASTIME_TAIL.sub("", re.split(r"\s*[,;(]", what, maxsplit=1)[0]).strip(" .,!'\"")
    words = what.split()
    if not words or len(words) > 4 or words[0].lower() in _NOT_A_PASTIME:
        return False
    fact_add(ctx, clause, subject, "likes", what, confidence=min(confidence, 0.8))  # a pastime is liked (the vocabulary's word)
    return True
