"""Rules for people and animals: pets, family and partners, age."""

import re

from memories.extraction.offline.context import Clause, Context, Predicate
from memories.extraction.offline.facts import fact_add, relation_sentence
from memories.extraction.offline.words import NAME, NOT_NAMES, NUMBER_WORDS, PET_RE, PETS, RELATION_RE, RELATIONS
from memories.extraction.offline.values import proper_name


# What a pet does, said right after its name: "my cat pickle knocked …", "my dog rocket ate …", "my horse pickle threw …".
_PET_DID = re.compile(r"\s+(?:[a-z]{3,}ed|ate|threw|ran|bit|took|got|broke|stole|went|came|found|dug|chewed|is|was|has|had|loves|hates)\b")


def pet_named_in_lowercase(name: str, rest: str, clause: Clause, *, called: bool = False) -> bool:
    """In chat typed all in lowercase, the word right after "my cat" that then does something is its name, even an
    English word ("my cat pickle knocked my phone in the bath"), as is the word after "called" ("my cat is called
    pickle"); not "my dog barked all night", nor "my cat really …"."""
    return (clause.typed_lowercase and re.fullmatch(r"[a-z]{3,}", name) is not None and not name.endswith(("ed", "ing", "ly"))
            and name not in NOT_NAMES and (_PET_DID.match(rest) is not None or (called and not rest.strip(" .!"))))


# A pet's lowercase name after "called" / "named", and what follows it ("has a dog called moose").
_LOWERCASE_NAMED = re.compile(r"^\s*,?\s*(?:named|called)\s+(?P<name>[a-z][a-z'\-]+)\b(?P<rest>.*)$")


def rule_pets(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    m = re.match(
        rf"^(?:have|has|got|adopted|adopt|own|owns|bought|rescued|got myself|brought home|have got|has got)\s+"
        rf"(?:a|an|one|another|(?P<count>two|three|four|\d+))\s+(?:(?!hot\b)[\w-]+\s+){{0,2}}?(?P<kind>{PET_RE})(?:s|es)?\b"
        # "named Rex", or after an apposition: "a new puppy, a golden retriever called Max"
        rf"(?:(?:,\s+(?:a|an)\s+(?:[\w-]+\s+){{0,3}}?|\s*,?\s*)(?:named|called|whose name is)\s+(?P<name>{NAME}(?:\s+and\s+{NAME})?))?",
        pred.text,
        re.I,
    )
    if not m or (pred.negated and not pred.no_longer):
        return False
    pet = PETS[m["kind"].lower()]
    said_name = m["name"]
    if not said_name and (low := _LOWERCASE_NAMED.match(pred.text[m.end():])) and pet_named_in_lowercase(low["name"], low["rest"], clause, called=True):
        said_name = low["name"]  # "has a dog called moose", in chat typed all in lowercase
    names = [n for n in re.split(r"\s+and\s+", said_name or "") if n]
    if names:
        for name in names:
            fact_add(ctx, clause, subject, "has_pet", name, obj=name, obj_kind="other", negated=pred.negated, confidence=confidence,
                 sentence=f"{subject} {'no longer has' if pred.negated else 'has'} a {pet} named {name}.")  # fmt: skip
            ctx.subject_kinds.setdefault(name, "other")
    else:
        fact_add(ctx, clause, subject, "has_pet", pet, negated=pred.negated, confidence=confidence,
             sentence=f"{subject} {'no longer has' if pred.negated else 'has'} a {pet}.")  # fmt: skip
    return True


def rule_family(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    t = pred.text
    if pred.negated:
        return False
    if m := re.match(
        rf"^(?:have|has|got)\s+(?:a|an|one|two|three|\d+)\s+"
        rf"(?:(?:little|older|younger|big|baby|twin|step-?|new|lovely|beautiful)\s*)*(?P<rel>{RELATION_RE})s?\b"
        rf"(?:\s*,?\s*(?:named|called)\s+(?P<name>{NAME}))?",
        t,
        re.I,
    ):
        rel = m["rel"].lower()
        attribute, word = RELATIONS[rel]
        if m["name"]:
            fact_add(ctx, clause, subject, attribute, m["name"], obj=m["name"], obj_kind="person", confidence=confidence,
                 sentence=relation_sentence(subject, attribute, word, m["name"]))  # fmt: skip
            ctx.subject_kinds.setdefault(m["name"], "person")
            return True
        count = re.match(r"^(?:have|has|got)\s+(two|three|four|five|\d+)\s+(?:kids|children)\b", t, re.I)
        if count:
            number = NUMBER_WORDS.get(count[1].lower()) or int(count[1])
            fact_add(ctx, clause, subject, "number_of_children", str(number), confidence=confidence, sentence=f"{subject} has {number} children.")
            return True
        return False
    married = rf"^(?:got married|married|am married|is married|got engaged|am engaged|is engaged)(?:\s+to)?(?:\s+(?P<name>{NAME}))?"
    if m := re.match(married, t, re.I):
        engaged = "engaged" in m[0].lower()
        status = "engaged" if engaged else "married"
        if m["name"] and proper_name(m["name"], clause, name=True):
            attribute = "partner" if engaged else "spouse"
            fact_add(ctx, clause, subject, attribute, m["name"], obj=m["name"], obj_kind="person", confidence=confidence,
                 sentence=f"{subject} is {status} to {m['name']}.")  # fmt: skip
            ctx.subject_kinds.setdefault(m["name"], "person")
        fact_add(ctx, clause, subject, "relationship_status", status, confidence=confidence, sentence=f"{subject} is {status}.")
        return True
    if m := re.match(r"^(?:got divorced|(?:am|is) divorced|(?:am|is) single|got separated|(?:am|is) separated|broke up)\b", t, re.I):
        status = {"broke": "single"}.get(m[0].split()[0].lower(), m[0].split()[-1].lower())
        fact_add(ctx, clause, subject, "relationship_status", status, confidence=confidence, sentence=f"{subject} is {status}.")
        return True
    baby = (
        rf"^(?:had|welcomed)\s+(?:a|our|my|her|his|their)\s+(?:first\s+|second\s+|new\s+)?(?:baby|son|daughter)"
        rf"(?:\s+(?:girl|boy))?(?:\s*,?\s*(?:named|called)\s+(?P<name>{NAME}))?"
    )
    if m := re.match(baby, t, re.I):
        value = m["name"] or "a baby"
        fact_add(ctx, clause, subject, "has_child", value, obj=m["name"], obj_kind="person", confidence=confidence,
             sentence=f"{subject} had a baby named {m['name']}." if m["name"] else f"{subject} had a baby.")  # fmt: skip
        return True
    return False


def rule_age(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    m = re.match(r"^(?:am|is|turned|turn|turns)\s+(?P<age>\d{1,3})(?:\s+years?\s+old)?$", pred.text, re.I)
    if not m or pred.negated or not 0 < int(m["age"]) < 130:
        return False
    fact_add(ctx, clause, subject, "age", m["age"], confidence=confidence, sentence=f"{subject} is {m['age']} years old.")
    return True
