"""The pages' cast: the shared one (owner, editor, viewer of team A; outsider of team B) signed
in through Django's test client, and a little memory in alpha to look at."""

import pytest
from django.test import Client

from memories.models import Entity, Episode, Fact, FactStatus
from memories.services.ingest import remember


class Pages:
    """A test client per member of the cast, signed in (`anonymous` is not)."""

    def __init__(self, cast):
        self.anonymous = Client()
        for role in ("owner", "editor", "viewer", "outsider"):
            client = Client()
            client.force_login(getattr(cast, role))
            setattr(self, role, client)


@pytest.fixture
def pages(cast):
    return Pages(cast)


@pytest.fixture
def memory(cast, django_capture_on_commit_callbacks):
    """Alpha remembers where ankesh lived (extraction runs, eagerly, as a commit would run it):
    San Francisco first, then New York, so lives_in has an active and a superseded fact."""
    with django_capture_on_commit_callbacks(execute=True):
        first = remember(scope=cast.scope_a, text="I live in San Francisco", speaker="ankesh", occurred_at="2024-01-10", actor=cast.p_owner)
    with django_capture_on_commit_callbacks(execute=True):
        second = remember(scope=cast.scope_a, text="I moved to New York", speaker="ankesh", occurred_at="2025-02-10", actor=cast.p_owner)
    m = type("Memory", (), {})()
    m.first = Episode.objects.get(public_id=first.episodes[0].episode_id)
    m.second = Episode.objects.get(public_id=second.episodes[0].episode_id)
    m.ankesh = Entity.objects.get(scope=cast.scope_a, name__iexact="ankesh")
    m.active = Fact.objects.get(scope=cast.scope_a, subject=m.ankesh, attribute="lives_in", status=FactStatus.ACTIVE)
    m.old = Fact.objects.get(scope=cast.scope_a, subject=m.ankesh, attribute="lives_in", status=FactStatus.SUPERSEDED)
    return m


@pytest.fixture
def foreign(cast, django_capture_on_commit_callbacks):
    """Bravo (team B) remembers something too: its rows must be a 404 from alpha's members."""
    with django_capture_on_commit_callbacks(execute=True):
        stored = remember(scope=cast.scope_b, text="I work at Acme", speaker="olga", actor=cast.p_outsider)
    m = type("Foreign", (), {})()
    m.episode = Episode.objects.get(public_id=stored.episodes[0].episode_id)
    m.fact = Fact.objects.filter(scope=cast.scope_b).first()
    m.entity = m.fact.subject
    return m


HX = {"HX-Request": "true"}


def hx(target: str | None = None) -> dict:
    """Headers of an htmx request (aimed at the element with id `target`)."""
    return {**HX, "HX-Target": target} if target else dict(HX)
