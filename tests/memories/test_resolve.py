"""Entity resolution: alias → containment → trigram → embedding → new; aliases recorded."""

import pytest

from memories.models import Embedding, Entity, EntityAlias
from memories.services.resolve import EMBEDDING_THRESHOLD, Resolver, entity_find


def _entity(scope, name, kind="other", *aliases):
    entity = Entity.objects.create(scope=scope, name=name, kind=kind)
    for alias in (name, *aliases):
        EntityAlias.objects.create(scope=scope, entity=entity, alias=alias, normalized=alias.casefold())
    return entity


def _unit(*components, dim=8):
    vec = list(components) + [0.0] * (dim - len(components))
    norm = sum(v * v for v in vec) ** 0.5
    return [v / norm for v in vec]


@pytest.mark.django_db
def test_google_google_and_my_company_google_resolve_to_one_entity(cast):
    resolver = Resolver(scope=cast.scope_a)
    first = resolver.resolve("Google", kind="organization")
    assert first.created and first.method == "created"
    assert Resolver(scope=cast.scope_a).resolve("google").entity == first.entity
    contained = Resolver(scope=cast.scope_a).resolve("my company Google")
    assert contained.entity == first.entity and contained.method == "containment"
    assert Entity.objects.filter(scope=cast.scope_a).count() == 1
    assert set(EntityAlias.objects.filter(entity=first.entity).values_list("normalized", flat=True)) == {"google", "my company google"}
    # …and now the longer name is an exact alias.
    assert Resolver(scope=cast.scope_a).resolve("My company Google").method == "alias"


@pytest.mark.django_db
def test_an_exact_alias_wins_over_containment_and_trigram(cast):
    york = _entity(cast.scope_a, "York", "place")
    new_york = _entity(cast.scope_a, "New York", "place", "NYC")
    assert entity_find(scope=cast.scope_a, name="new york") == (new_york, "alias")
    assert entity_find(scope=cast.scope_a, name="nyc") == (new_york, "alias")
    assert entity_find(scope=cast.scope_a, name="York") == (york, "alias")


@pytest.mark.django_db
def test_containment_prefers_the_longest_alias_and_respects_word_boundaries(cast):
    york = _entity(cast.scope_a, "York", "place")
    new_york = _entity(cast.scope_a, "New York", "place")
    assert entity_find(scope=cast.scope_a, name="downtown New York") == (new_york, "containment")
    assert entity_find(scope=cast.scope_a, name="old York town") == (york, "containment")
    assert entity_find(scope=cast.scope_a, name="Yorkshire") is None  # not a word of it


@pytest.mark.django_db
def test_a_name_inside_a_longer_alias_finds_it(cast):
    cloud = _entity(cast.scope_a, "Google Cloud Platform", "organization")
    assert entity_find(scope=cast.scope_a, name="Google Cloud") == (cloud, "containment")
    assert entity_find(scope=cast.scope_a, name="oog") is None


@pytest.mark.django_db
def test_a_misspelling_resolves_by_trigram_similarity_and_becomes_an_alias(cast):
    google = _entity(cast.scope_a, "Google", "organization")
    assert entity_find(scope=cast.scope_a, name="Gooogle") == (google, "trigram")
    resolution = Resolver(scope=cast.scope_a).resolve("Gooogle", kind="organization")
    assert resolution.entity == google and resolution.method == "trigram"
    assert EntityAlias.objects.filter(entity=google, normalized="gooogle").exists()


@pytest.mark.django_db
def test_dissimilar_names_do_not_match_by_trigram(cast):
    _entity(cast.scope_a, "San Francisco", "place")
    _entity(cast.scope_a, "New York", "place")
    assert entity_find(scope=cast.scope_a, name="San Diego") is None
    assert entity_find(scope=cast.scope_a, name="New Jersey") is None


@pytest.mark.django_db
def test_fuzzy_matches_do_not_cross_kinds(cast):
    _entity(cast.scope_a, "Paris", "place")
    assert entity_find(scope=cast.scope_a, name="Pariss", kind="person") is None
    assert entity_find(scope=cast.scope_a, name="Pariss", kind="place")[1] == "trigram"


@pytest.mark.django_db
def test_an_embedding_at_least_0_88_similar_resolves_when_names_differ(cast):
    apple = _entity(cast.scope_a, "Big Apple", "place")
    Embedding.objects.create(scope=cast.scope_a, target_type="entity", target_id=apple.pk, model="unit-8", vec=_unit(1, 0.2))
    close = _unit(1, 0.4)  # cosine ≈ 0.98
    far = _unit(1, 1.2)  # cosine ≈ 0.77
    assert sum(a * b for a, b in zip(close, _unit(1, 0.2))) >= EMBEDDING_THRESHOLD
    assert entity_find(scope=cast.scope_a, name="Gotham", vector=close, model="unit-8") == (apple, "embedding")
    assert entity_find(scope=cast.scope_a, name="Gotham", vector=far, model="unit-8") is None
    assert entity_find(scope=cast.scope_a, name="Gotham", vector=close, model="other-model") is None


@pytest.mark.django_db
def test_first_person_names_mean_the_speaker(cast):
    resolver = Resolver(scope=cast.scope_a, speaker="ankesh")
    me = resolver.resolve("ankesh").entity
    assert me.kind == "person"
    for name in ("I", "me", "my", "Myself"):
        assert Resolver(scope=cast.scope_a, speaker="ankesh").resolve(name).entity == me
    assert not EntityAlias.objects.filter(normalized__in=["i", "me", "my"]).exists()


@pytest.mark.django_db
def test_a_merged_entity_resolves_to_the_one_it_was_merged_into(cast):
    alphabet = _entity(cast.scope_a, "Alphabet", "organization")
    google = _entity(cast.scope_a, "Google", "organization")
    google.merged_into = alphabet
    google.save()
    assert Resolver(scope=cast.scope_a).resolve("google").entity == alphabet


@pytest.mark.django_db
def test_resolution_never_crosses_scopes(cast):
    _entity(cast.scope_b, "Google", "organization")
    assert entity_find(scope=cast.scope_a, name="Google") is None
    created = Resolver(scope=cast.scope_a).resolve("Google")
    assert created.created and created.entity.scope == cast.scope_a


@pytest.mark.django_db
def test_without_create_an_unknown_name_is_none_and_nothing_is_written(cast):
    assert Resolver(scope=cast.scope_a).resolve("Nowhere", create=False) is None
    assert not Entity.objects.exists()
