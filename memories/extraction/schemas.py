"""What an extraction must give, validated with pydantic: the contract between the extractors (a
language model's reply, or the offline rules) and the memory services.

A model's reply is validated against these (`memoryweb.providers.llm` re-asks with the validation
error until it fits); the offline extractor builds them directly. Which attributes exist and which
are single-valued is `memories.extraction.vocabulary`.
"""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

EntityKindName = Literal["person", "organization", "place", "thing", "other"]
RoleName = Literal["actor", "object", "location", "other"]

# Models say "city" or "company" where the schema says place or organization; those are hints,
# not worth a retry.
_KIND_SYNONYMS = {
    "city": "place", "country": "place", "location": "place", "town": "place", "state": "place",
    "region": "place", "company": "organization", "org": "organization", "employer": "organization",
    "school": "organization", "university": "organization", "institution": "organization",
    "human": "person", "people": "person", "animal": "other", "pet": "other", "object": "thing",
    "item": "thing", "product": "thing", "concept": "other", "activity": "other", "event": "other",
}  # fmt: skip
_KINDS = {"person", "organization", "place", "thing", "other"}
_ROLES = {"actor", "object", "location", "other"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    @model_validator(mode="before")
    @classmethod
    def _nulls_mean_unset(cls, data):
        """Models write null or "" for "not known": that means the default, not an error.

        A required field left null still fails (as "Field required"), so the retry can name it."""
        if not isinstance(data, dict):
            return data
        cleaned = {}
        for key, value in data.items():
            field = cls.model_fields.get(key)
            if field is not None and (value is None or (isinstance(value, str) and not value.strip())):
                if field.is_required() or field.default is not None or field.default_factory is not None:
                    continue  # use the default (or report the field as missing)
                value = None
            cleaned[key] = value
        return cleaned


def _lenient_kind(value):
    if isinstance(value, str):
        value = value.strip().lower()
        value = _KIND_SYNONYMS.get(value, value)
        return value if value in _KINDS else "other"
    return value


class ExtractedEntity(_Strict):
    name: str = Field(min_length=1, max_length=200)
    kind: EntityKindName = "other"
    role: RoleName = "other"

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value):
        return _lenient_kind(value)

    @field_validator("role", mode="before")
    @classmethod
    def _role(cls, value):
        if isinstance(value, str):
            value = {"subject": "actor", "place": "location"}.get(value.strip().lower(), value.strip().lower())
            return value if value in _ROLES else "other"
        return value


class ExtractedFact(_Strict):
    """One atomic state, e.g. subject "ankesh", attribute "lives_in", value "New York"."""

    subject: str = Field(min_length=1, max_length=200, description="entity name; the speaker's name for 'I'")
    attribute: str = Field(min_length=1, max_length=64, description="snake_case, e.g. lives_in, works_at, role, likes")
    value: str = Field(min_length=1, max_length=300)
    object_entity: str | None = Field(default=None, description="the entity the value names, if any (Google, New York)")
    object_kind: EntityKindName = "other"
    sentence: str = Field(min_length=1, max_length=1000, description="one atomic natural-language sentence")
    valid_from: datetime | None = Field(default=None, description="when this became true, if the text says")
    previous_value: str | None = Field(default=None, description="the value it replaced ('moved from X to Y': X)")
    negated: bool = Field(default=False, description="the text says this is no longer / not true")
    corrects: str | None = Field(
        default=None, description="a correction ('Munich, not Berlin'): the wrong value said before, which this replaces from its start"
    )
    confidence: float = Field(default=0.9, ge=0, le=1)
    importance: float | None = Field(default=None, ge=0, le=1)

    @field_validator("attribute")
    @classmethod
    def _snake(cls, value: str) -> str:
        return "_".join(value.lower().replace("-", " ").split())

    @field_validator("object_kind", mode="before")
    @classmethod
    def _kind(cls, value):
        return _lenient_kind(value)


class Extraction(_Strict):
    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)
    importance: float = Field(default=0.5, ge=0, le=1)
    occurred_at: datetime | None = Field(default=None, description="when it happened, if the text says so")
    location: str | None = None


class ReconcileDecision(_Strict):
    """What to do with one extracted fact given similar active facts of the same subject."""

    action: Literal["ADD", "UPDATE", "DELETE", "NOOP"]
    target_fact_id: str | None = Field(default=None, description="id of the existing fact for UPDATE, DELETE or NOOP")
    reason: str = ""

    @field_validator("action", mode="before")
    @classmethod
    def _upper(cls, value):
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("target_fact_id", mode="before")
    @classmethod
    def _id_as_text(cls, value):
        return str(value) if isinstance(value, int) else value
