"""What the rules pass around: the clause being read, the reading so far, and a predicate."""

from dataclasses import dataclass, field
from datetime import datetime

from memories.extraction.schemas import ExtractedFact


@dataclass
class Clause:
    text: str
    typed_lowercase: bool
    valid_from: datetime | None = None
    corrects: str | None = None  # "I moved to Munich, not Berlin": the value said wrongly before
    topic: str | None = None  # "Version control news: we migrated …": the function a label before a colon names
    bare: bool = False  # its subject is a thing said without "the" / "our" ("paging goes through Opsgenie": `common_subject`)


@dataclass
class Context:
    speaker: str
    occurred_at: datetime
    tz: object
    team: str | None = None  # in a team's scope, whom "we" / "our" mean; else the speaker
    facts: list[ExtractedFact] = field(default_factory=list)
    subject_kinds: dict[str, str] = field(default_factory=dict)
    last_third_person: str | None = None
    event_at: datetime | None = None
    last_thing: str | None = None  # the head of the team thing last read: "the North American ones" are servers
    people: dict[str, str] = field(default_factory=dict)  # the scope's speakers typed in lowercase → as a name ("priya" → "Priya")
    sentence: str = ""  # the sentence being read, whole (a clause split off "since I started …" does not say "since")
    label: str | None = None  # the label that heads the message ("drone news: the Phantom's retired. we've got a Mavic now"): its later sentences' topic

    @property
    def we(self) -> str:
        return self.team or self.speaker


@dataclass
class Predicate:
    text: str
    negated: bool = False
    no_longer: bool = False  # "no longer" / "anymore": a state that ended, not a dislike
    perfect: bool = False  # "have lived in": still true, unlike "lived in"
