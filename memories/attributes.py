"""How an attribute behaves when a new value arrives.

The vocabulary and the single-valued list live in one place, the extraction contract
(memoryweb/providers/schemas.py: ATTRIBUTES, SINGLE_VALUED_ATTRIBUTES, is_single_valued):
single-valued attributes (lives_in, works_at, role, age, relationship_status, name, email,
phone, favorite_* …) hold one value at a time, so a new value supersedes the old one;
everything else (likes, dislikes, has_pet, has_child, speaks, visited …) accumulates. An
attribute outside the vocabulary accumulates too: adding never ends a true fact by mistake.

This module adds what reconciliation needs on top: the other spellings models use for the
same attribute, mapped to the vocabulary before facts are compared.
"""

from memoryweb.providers.schemas import SINGLE_VALUED_ATTRIBUTES
from memoryweb.providers.schemas import is_single_valued as _vocabulary_single_valued

SYNONYMS = {
    "live_in": "lives_in", "resides_in": "lives_in", "lives_at": "lives_in", "based_in": "lives_in",
    "works_for": "works_at", "work_at": "works_at", "employer": "works_at", "employed_at": "works_at",
    "job_title": "role", "job": "role", "position": "role", "occupation": "role", "title": "role",
    "like": "likes", "loves": "likes", "love": "likes", "enjoys": "likes",
    "hates": "dislikes", "hate": "dislikes", "dislike": "dislikes",
    "pet": "has_pet", "pets": "has_pet", "child": "has_child", "children": "has_child",
    "language": "speaks", "languages": "speaks", "favourite_color": "favorite_color",
    "studying_at": "studies_at", "school": "studies_at",
}  # fmt: skip

__all__ = ["SINGLE_VALUED_ATTRIBUTES", "SYNONYMS", "canonical_attribute", "is_single_valued"]


def canonical_attribute(attribute: str) -> str:
    key = "_".join(attribute.lower().replace("-", " ").split())
    if key.startswith("favourite_"):
        key = "favorite_" + key.removeprefix("favourite_")
    return SYNONYMS.get(key, key)


def is_single_valued(attribute: str) -> bool:
    return _vocabulary_single_valued(canonical_attribute(attribute))
