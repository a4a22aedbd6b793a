"""Checks the multi-process tests share: episodes whose extraction and indexing can be counted
(people moving between cities), and the count."""

from collections import Counter
from datetime import date, timedelta

from memoryweb.providers.embedders import get_embedder
from memories.models import Embedding, EmbeddingTarget, Entity, Episode, Fact, FactStatus, FactSupport, Scope
from retrieval.indexing import vector_target
from retrieval.models import Collection, SearchDocument

# Names and places no fuzzy match takes for one another.
SPEAKERS = ["Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiroshi", "Ines", "Jonas", "Kofi", "Lena",
            "Mateo", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tariq", "Umberto", "Viktor", "Wen", "Yara"]
CITIES = ["Lisbon", "Porto", "Berlin", "Paris", "Madrid", "Rome", "Vienna", "Prague", "Oslo", "Dublin", "Athens",
          "Warsaw", "Zurich", "Munich", "Seville", "Krakow", "Helsinki", "Stockholm", "Copenhagen", "Amsterdam"]


def move(n: int) -> dict:
    """Episode n: a speaker moves to a city, a week after their previous move (sometimes back to one they left)."""
    return {"id": f"m{n}", "text": f"I moved to {CITIES[n * 7 % len(CITIES)]}", "speaker": SPEAKERS[n % len(SPEAKERS)],
            "occurred_at": (date(2020, 1, 1) + timedelta(weeks=n // len(SPEAKERS))).isoformat()}


def extracted_and_indexed_once(scope_id: int, episode_pks: list[int]) -> None:
    """Each episode extracted once and everything of the scope indexed once (a failed assertion otherwise)."""
    scope = Scope.objects.get(pk=scope_id)
    model = get_embedder().name
    # Extracted once: each episode the source of one fact or the support of one (its move said again),
    # one entity per person and city, and each person's latest move is their one active lives_in fact.
    said = Counter(Fact.objects.in_scope(scope).filter(source_episode_id__in=episode_pks).values_list("source_episode_id", flat=True))
    said.update(FactSupport.objects.filter(episode_id__in=episode_pks).values_list("episode_id", flat=True))
    assert said == {pk: 1 for pk in episode_pks}
    names = Counter(Entity.objects.in_scope(scope).filter(merged_into__isnull=True).values_list("name", flat=True))
    assert {name: count for name, count in names.items() if count > 1} == {}
    moves: dict[str, list[str]] = {}
    for text, speaker, _ in sorted(Episode.objects.filter(pk__in=episode_pks).values_list("text", "speaker", "occurred_at"), key=lambda e: e[2]):
        moves.setdefault(speaker, []).append(text.removeprefix("I moved to "))
    active = dict(Fact.objects.in_scope(scope).filter(attribute="lives_in", status=FactStatus.ACTIVE).values_list("subject__name", "value"))
    # One active home per person, their latest move, whatever order the workers took the moves in
    # (a move back too: reconcile restores it when a move before it is told after it).
    latest = {speaker: cities[-1] for speaker, cities in moves.items()}
    assert active == latest, (latest, active)
    # Indexed once: one search document per free-standing episode, per turn and turn window, and per
    # fact, each with one vector of the model.
    docs = SearchDocument.objects.in_scope(scope)
    turns = dict(Episode.objects.filter(pk__in=episode_pks, turn__isnull=False).values_list("pk", "turn_id"))
    expected = {Collection.EPISODE: [pk for pk in episode_pks if pk not in turns],
                Collection.FACT: list(Fact.objects.in_scope(scope).values_list("pk", flat=True))}
    expected |= {collection: list(turns.values()) for collection in (Collection.TURN, Collection.TURN_W1, Collection.TURN_W2)}
    assert all(expected.values())
    for collection, target_ids in expected.items():
        found = Counter(docs.filter(collection=collection).values_list("target_id", flat=True))
        assert found == {pk: 1 for pk in target_ids}, collection
        vectors = Counter(Embedding.objects.filter(scope=scope, model=model, target_type=vector_target(collection))
                          .values_list("target_id", flat=True))
        assert vectors == {pk: 1 for pk in docs.filter(collection=collection).values_list("pk", flat=True)}, collection
    entity_vectors = Counter(Embedding.objects.filter(scope=scope, model=model, target_type=EmbeddingTarget.ENTITY)
                             .values_list("target_id", flat=True))
    assert max(entity_vectors.values()) == 1
