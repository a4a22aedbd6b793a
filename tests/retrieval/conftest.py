from datetime import UTC, datetime

import pytest

from memories.services.ingest import remember

# The memory-core scenario, months apart, speaker ankesh (issue 3); "now" is fixed.
SCENARIO = [
    ("I love playing football", datetime(2024, 1, 10, tzinfo=UTC)),
    ("I just started at Google as a software engineer in San Francisco", datetime(2024, 4, 2, tzinfo=UTC)),
    ("I got promoted to senior engineer at Google", datetime(2024, 11, 5, tzinfo=UTC)),
    ("I moved from San Francisco to New York", datetime(2025, 4, 20, tzinfo=UTC)),
]
NOW = datetime(2025, 6, 1, tzinfo=UTC)


@pytest.fixture
def scenario(cast, django_capture_on_commit_callbacks):
    """ankesh's four statements stored through remember() and the offline extractor (the test
    transaction never commits, so the queued extraction runs as a commit would run it)."""
    for text, when in SCENARIO:
        with django_capture_on_commit_callbacks(execute=True):
            remember(scope=cast.scope_a, text=text, speaker="ankesh", occurred_at=when, actor=cast.p_owner)
    return cast
