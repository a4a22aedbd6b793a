"""A statement read by the offline extractor as the extraction tests compare it: (subject, attribute in its
canonical name, value[, the value it replaced]) for each fact, leaving out what the statement says is not so."""

from datetime import UTC, datetime

from memories.extraction.offline import extract
from memories.extraction.vocabulary import canonical_attribute

SAID = datetime(2026, 6, 15, 12, tzinfo=UTC)
TEAM = "Orbit"


def read(text: str, *, team: str | None = TEAM, speaker: str = "maya", people=(), said: datetime = SAID,
         previous: bool = False, negated: bool = False) -> list[tuple]:
    """`previous`: each fact's replaced value too; `negated`: keep the facts said not to hold."""
    facts = extract(text=text, speaker=speaker, occurred_at=said, team=team, people=people).facts
    return [(f.subject, canonical_attribute(f.attribute), f.value) + ((f.previous_value,) if previous else ())
            for f in facts if negated or not f.negated]


def said_in_team(cast, capture, statements: list[tuple[str, datetime]], *, team: str = "Orbit", speaker: str = "dana") -> None:
    """Each statement said in `cast.scope_a`, whose team is named `team`, and extracted offline as a commit would run it
    (`capture`: pytest-django's django_capture_on_commit_callbacks)."""
    from memories.services.ingest import remember

    cast.team_a.name = team
    cast.team_a.save()
    for text, when in statements:
        with capture(execute=True):
            remember(scope=cast.scope_a, text=text, speaker=speaker, occurred_at=when, actor=cast.p_owner)
