"""What recall returns: ranked items that say why they ranked and where they came from."""

from dataclasses import dataclass, field
from datetime import datetime

from retrieval.temporal import TimeWindow

KINDS = ("fact", "episode", "turn")


@dataclass
class RecallItem:
    kind: str
    id: str  # the row's public id
    text: str
    score: float
    lanes: dict[str, float]
    status: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    occurred_at: datetime | None = None
    speaker: str = ""
    subject: str = ""
    attribute: str = ""
    value: str = ""
    source: dict[str, str | None] = field(default_factory=dict)  # public episode id, session and turn external ids
    why: list[str] = field(default_factory=list)
    pk: int = 0  # the row's primary key, internal
    # A turn's: the next turn of its session, (primary key, speaker), internal (replies_follow).
    next_turn: tuple[int, str] | None = None
    # A turn's: the turn before it in its session (primary key), internal (retrieval/rerank.py).
    previous_turn: int | None = None

    def as_dict(self) -> dict:
        data = {
            "kind": self.kind, "id": self.id, "text": self.text, "score": round(self.score, 4),
            "lanes": {name: round(value, 4) for name, value in self.lanes.items()},
            "status": self.status,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "occurred_at": self.occurred_at.isoformat() if self.occurred_at else None,
            "speaker": self.speaker, "source": self.source, "why": self.why,
        }
        if self.kind == "fact":
            data.update(subject=self.subject, attribute=self.attribute, value=self.value)
        return data


@dataclass
class RecallResult:
    query: str
    items: list[RecallItem]
    window: TimeWindow | None = None
    as_of: datetime | None = None
    include_history: bool = False
    entities: list[str] = field(default_factory=list)
    lexemes: list[str] = field(default_factory=list)
    pool: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    # Rows stored but not in the search index yet (the index task is behind; counted up to
    # 10,000). They were searched by their raw text only: no vectors, no BM25 weights.
    pending: int = 0

    def as_dict(self) -> dict:
        return {
            "query": self.query,
            "results": [item.as_dict() for item in self.items],
            "window": self.window.as_dict() if self.window else None,
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "include_history": self.include_history,
            "entities": self.entities,
            "lexemes": self.lexemes,
            "pending": self.pending,
        }
