"""The attribute vocabulary, in one place: which attributes there are, what each means, which hold
one value at a time, and the other spellings models use for them.

Single-valued attributes (lives_in, works_at, role, age, relationship_status, name, email, phone,
favorite_* …) hold one current value per subject, so a new value supersedes the old one;
everything else (likes, dislikes, has_pet, has_child, speaks, visited …) accumulates. An attribute
outside the vocabulary accumulates too: adding never ends a true fact by mistake.

The offline rules use these names always, the model prompts as a recommendation
(`memories.extraction.prompts`); reconciliation (`memories.services.reconcile`) and manual
corrections read `is_single_valued`; question analysis in `retrieval` maps questions onto them.
"""

ATTRIBUTES: dict[str, str] = {
    "lives_in": "city or place the subject lives in now",
    "lived_in": "a place the subject used to live in",
    "works_at": "organization the subject works for",
    "worked_at": "an organization the subject used to work for",
    "role": "job title or position",
    "studies_at": "school or university",
    "studies": "subject of study",
    "graduated_from": "school or university the subject graduated from",
    "is_from": "country or city the subject comes from",
    "grew_up_in": "place the subject grew up in",
    "born_in": "place of birth",
    "birth_date": "date of birth (ISO date)",
    "age": "age in years",
    "spouse": "husband or wife",
    "partner": "girlfriend, boyfriend, partner or fiancé(e)",
    "relationship_status": "single, married, engaged, divorced …",
    "mother": "mother's name",
    "father": "father's name",
    "has_child": "a child (name when known)",
    "has_son": "a son",
    "has_daughter": "a daughter",
    "has_sister": "a sister",
    "has_brother": "a brother",
    "has_friend": "a friend",
    "has_pet": "a pet (its name when known, else the animal)",
    "likes": "something the subject likes, loves or enjoys (normalised: 'playing football' -> football)",
    "dislikes": "something the subject dislikes or hates",
    "plays": "a sport, game or instrument the subject plays",
    "speaks": "a language the subject speaks",
    "visited": "a place the subject went to or visited",
    "name": "the subject's own name",
    "email": "email address",
    "phone": "phone number",
    "birthday": "birthday as said",
    "number_of_children": "how many children",
}
SINGLE_VALUED_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "lives_in", "works_at", "role", "studies_at", "studies", "is_from", "grew_up_in", "born_in",
        "birth_date", "age", "spouse", "partner", "relationship_status", "mother", "father",
        "name", "email", "phone", "birthday", "number_of_children", "boss",
    }
)  # fmt: skip

# Other spellings of vocabulary attributes, mapped before facts are compared: a model that writes
# "resides_in" means lives_in, and must supersede the old city like lives_in does.
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


def canonical_attribute(attribute: str) -> str:
    key = "_".join(attribute.lower().replace("-", " ").split())
    if key.startswith("favourite_"):
        key = "favorite_" + key.removeprefix("favourite_")
    return SYNONYMS.get(key, key)


def is_single_valued(attribute: str) -> bool:
    """lives_in, works_at, role, favorite_* … hold one value; likes, has_*, visited … accumulate."""
    canonical = canonical_attribute(attribute)
    return canonical in SINGLE_VALUED_ATTRIBUTES or canonical.startswith("favorite_")
