"""What the language model (or the offline extractor) must return, validated with pydantic.

These schemas are the contract between the providers and the memory services: every provider
returns these objects, whatever it is underneath.
"""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

EntityKindName = Literal["person", "organization", "place", "thing", "other"]
RoleName = Literal["actor", "object", "location", "other"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class ExtractedEntity(_Strict):
    name: str = Field(min_length=1, max_length=200)
    kind: EntityKindName = "other"
    role: RoleName = "other"


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
    confidence: float = Field(default=0.9, ge=0, le=1)
    importance: float | None = Field(default=None, ge=0, le=1)

    @field_validator("attribute")
    @classmethod
    def _snake(cls, value: str) -> str:
        return "_".join(value.lower().replace("-", " ").split())


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
