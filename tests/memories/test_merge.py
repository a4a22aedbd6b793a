"""Merging entities: everything moves to the target, collisions are settled, and undo puts every
row back exactly."""

import pytest

from accounts.models import AuditEvent
from memoryweb.errors import Conflict, Forbidden, NotFound
from memories.models import (
    Embedding, EmbeddingTarget, Entity, EntityAlias, EntityMerge, Episode, Fact, FactStatus, FactSupport, Mention,
)
from memories.normalize import normalize_name
from memories.services.facts import fact_restore, fact_retract
from memories.services.merge import entity_merge, entity_merge_preview, entity_merge_undo
from memories.services.reconcile import NewFact, fact_reconcile
from memories.services.resolve import Resolver, entity_find

from .conftest import at


class World:
    pass


def _fact(scope, subject, attribute, value, when, *, episode=None, object_entity=None):
    return fact_reconcile(scope=scope, episode=episode, new=NewFact(
        subject=subject, attribute=attribute, value=value, sentence=f"I {attribute.replace('_', ' ')} {value}.", valid_from=when,
        object_entity=object_entity,
    )).fact


@pytest.fixture
def world(cast):
    """"Jonny" (the source) and "Jon Smith" (the target) are one person; Ann knows Jonny."""
    w = World()
    scope = w.scope = cast.scope_a
    resolver = Resolver(scope=scope)
    w.source = resolver.resolve("Jonny", kind="person").entity
    EntityAlias.objects.create(scope=scope, entity=w.source, alias="Jonathan S", normalized=normalize_name("Jonathan S"))
    w.target = resolver.resolve("Jon Smith", kind="person").entity
    w.ann = resolver.resolve("Ann", kind="person").entity
    w.e1, w.e2, w.e3 = (Episode.objects.create(scope=scope, text=f"episode {n}", occurred_at=at(2024, n)) for n in (1, 2, 3))
    # Both say "likes football" actively: a collision. The source's is supported by a second episode.
    w.dup = _fact(scope, w.source, "likes", "football", at(2023, 6), episode=w.e1)
    FactSupport.objects.create(scope=scope, fact=w.dup, episode=w.e3, sentence="Jonny loves football.", valid_from=at(2024, 3))
    w.kept = _fact(scope, w.target, "likes", "football", at(2024, 2), episode=w.e2)
    # One lives_in each: both stay active, the preview lists them.
    w.boston = _fact(scope, w.source, "lives_in", "Boston", at(2024, 1), episode=w.e1)
    w.nyc = _fact(scope, w.target, "lives_in", "New York", at(2024, 2), episode=w.e2)
    # A history: Acme superseded by Initech, on the source.
    w.acme = _fact(scope, w.source, "works_at", "Acme", at(2020, 1))
    w.initech = _fact(scope, w.source, "works_at", "Initech", at(2022, 1))
    w.knows = _fact(scope, w.ann, "knows", "Jonny", at(2024, 1), object_entity=w.source)
    Mention.objects.create(scope=scope, episode=w.e1, entity=w.source, role="actor")
    Mention.objects.create(scope=scope, episode=w.e2, entity=w.source, role="actor")  # the target's too: dropped
    Mention.objects.create(scope=scope, episode=w.e2, entity=w.target, role="actor")
    Mention.objects.create(scope=scope, episode=w.e3, entity=w.source, role="object")
    Embedding.objects.create(scope=scope, target_type=EmbeddingTarget.ENTITY, target_id=w.source.pk, model="hash", vec=[0.5, 0.5])
    for fact in (w.dup, w.kept, w.boston, w.nyc, w.acme, w.initech, w.knows):
        fact.refresh_from_db()
    return w


def snapshot() -> dict[str, list[dict]]:
    """Every row of the tables a merge touches, by primary key."""
    return {model.__name__: list(model.objects.order_by("pk").values()) for model in (Fact, Mention, EntityAlias, Entity, FactSupport)}


def test_a_merge_moves_facts_mentions_and_aliases_and_keeps_the_source(cast, world):
    w = world
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    w.source.refresh_from_db()
    assert w.source.merged_into == w.target  # kept, never deleted
    assert not Fact.objects.filter(subject=w.source).exists() and not Fact.objects.filter(object_entity=w.source).exists()
    assert Fact.objects.get(pk=w.knows.pk).object_entity == w.target
    assert {f.pk for f in Fact.objects.filter(subject=w.target)} == {w.dup.pk, w.kept.pk, w.boston.pk, w.nyc.pk, w.acme.pk, w.initech.pk}
    assert not Mention.objects.filter(entity=w.source).exists()
    assert set(Mention.objects.filter(entity=w.target).values_list("episode_id", "role")) == {
        (w.e1.pk, "actor"), (w.e2.pk, "actor"), (w.e3.pk, "object"),
    }
    assert set(EntityAlias.objects.filter(entity=w.target).values_list("normalized", flat=True)) == {"jonny", "jonathan s", "jon smith"}
    assert Embedding.objects.filter(target_type="entity", target_id=w.source.pk).count() == 1  # name vectors stay
    assert merge.source == w.source and merge.target == w.target and merge.by == cast.editor and merge.undone_at is None
    event = AuditEvent.objects.get(action="entity.merge")
    assert event.actor_user == cast.editor and event.scope == w.scope and event.target_id == str(w.source.public_id)
    assert event.after["merge"] == str(merge.public_id) and event.after["moved"] == merge.moved
    assert sorted(event.after["moved"]["facts_subject"]) == sorted([w.dup.pk, w.boston.pk, w.acme.pk, w.initech.pk])


def test_colliding_active_facts_keep_the_targets_and_supersede_the_duplicate(cast, world):
    w = world
    entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    kept, dup = Fact.objects.get(pk=w.kept.pk), Fact.objects.get(pk=w.dup.pk)
    assert kept.status == FactStatus.ACTIVE and kept.valid_from == at(2023, 6)  # held since the earlier of the two
    assert dup.status == FactStatus.SUPERSEDED and dup.valid_to == dup.valid_from == at(2023, 6)  # an empty interval
    assert dup.subject == w.target  # kept in the history
    # The duplicate's episodes now support the kept fact, so forgetting e2 would not erase it.
    assert set(FactSupport.objects.filter(fact=kept).values_list("episode_id", "sentence", "valid_from")) == {
        (w.e1.pk, w.dup.sentence, at(2023, 6)), (w.e3.pk, "Jonny loves football.", at(2024, 3)),
    }
    # Different values of a single-valued attribute both stay active.
    assert Fact.objects.get(pk=w.boston.pk).status == Fact.objects.get(pk=w.nyc.pk).status == FactStatus.ACTIVE
    assert Fact.objects.filter(subject=w.target, attribute="likes", status="active").count() == 1


def test_the_preview_lists_exactly_what_the_merge_moves_and_writes_nothing(cast, world):
    w = world
    before = snapshot()
    preview = entity_merge_preview(principal=cast.p_viewer, scope=w.scope, source=w.source, target=w.target)
    assert snapshot() == before and not AuditEvent.objects.exists() and not EntityMerge.objects.exists()
    data = preview.as_dict()
    assert data["collisions"] == [{"kept": str(w.kept.public_id), "duplicate": str(w.dup.public_id), "attribute": "likes",
                                   "value": "football", "outcome": "duplicate superseded, its episodes support the kept fact"}]
    assert [(c["source_value"], c["target_value"]) for c in data["conflicts"]] == [("Boston", "New York")]
    assert data["vectors_kept_on_source"] == 1 and data["mentions"] == 2 and data["mentions_dropped"] == 1
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    moved = merge.moved
    assert [f.pk for f in preview.facts_as_subject] == moved["facts_subject"]
    assert [f.pk for f in preview.facts_as_object] == moved["facts_object"] == [w.knows.pk]
    assert [m.pk for m in preview.mentions] == moved["mentions"]
    assert [m.pk for m in preview.mentions_dropped] == [m["id"] for m in moved["mentions_dropped"]]
    assert [a.pk for a in preview.aliases] == moved["aliases"]
    assert [(c.kept.pk, c.duplicate.pk) for c in preview.collisions] == [(c["kept"], c["duplicate"]) for c in moved["collisions"]]


def test_undo_restores_every_row_exactly(cast, world):
    w = world
    before = snapshot()
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    assert snapshot() != before
    undone = entity_merge_undo(principal=cast.p_owner, scope=w.scope, merge_id=merge.public_id)
    assert snapshot() == before
    assert undone.undone_at is not None
    event = AuditEvent.objects.get(action="entity.unmerge")
    assert event.actor_user == cast.owner and event.before == {"merge": str(merge.public_id), "merged_into": str(w.target.public_id)}


def test_undo_twice_is_refused(cast, world):
    w = world
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=merge.public_id)
    with pytest.raises(Conflict, match="undone already"):
        entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=merge.public_id)


def test_undo_is_refused_while_a_later_merge_involving_the_entities_stands(cast, world):
    w = world
    first = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    before_second = snapshot()
    second = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.target, target=w.ann)
    with pytest.raises(Conflict, match=f"Merge {second.public_id} .*undo it first"):
        entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=first.public_id)
    entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=second.public_id)
    assert snapshot() == before_second
    entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=first.public_id)
    assert Entity.objects.get(pk=w.source.pk).merged_into is None


@pytest.mark.parametrize("who, error", [("p_viewer", Forbidden), ("p_outsider", NotFound)])
def test_a_viewer_or_an_outsider_cannot_merge_or_undo(cast, world, who, error):
    w = world
    before = snapshot()
    with pytest.raises(error):
        entity_merge(principal=getattr(cast, who), scope=w.scope, source=w.source, target=w.target)
    assert snapshot() == before and not AuditEvent.objects.exists()
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    with pytest.raises(error):
        entity_merge_undo(principal=getattr(cast, who), scope=w.scope, merge_id=merge.public_id)
    assert EntityMerge.objects.get().undone_at is None


def test_an_outsider_cannot_preview(cast, world):
    with pytest.raises(NotFound):
        entity_merge_preview(principal=cast.p_outsider, scope=world.scope, source=world.source, target=world.target)


def test_merging_an_entity_into_itself_one_merged_already_or_one_of_another_scope_is_refused(cast, world):
    w = world
    with pytest.raises(Conflict, match="into itself"):
        entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.source)
    elsewhere = Entity.objects.create(scope=cast.scope_a2, name="Jon")
    with pytest.raises(NotFound):
        entity_merge(principal=cast.p_editor, scope=w.scope, source=elsewhere, target=w.target)
    with pytest.raises(NotFound):
        entity_merge_undo(principal=cast.p_editor, scope=cast.scope_a2, merge_id="not-a-merge")
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    with pytest.raises(NotFound):  # another scope's merge does not exist here
        entity_merge_undo(principal=cast.p_editor, scope=cast.scope_a2, merge_id=merge.public_id)
    for source, target in [(w.source, w.ann), (w.ann, w.source)]:
        with pytest.raises(Conflict, match="merged already"):
            entity_merge(principal=cast.p_editor, scope=w.scope, source=source, target=target)
    assert EntityMerge.objects.count() == 1


def test_after_a_merge_the_sources_names_resolve_to_the_target_and_after_undo_to_the_source_again(cast, world):
    w = world
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    for name in ("Jonny", "jonny", "Jonathan S"):
        assert entity_find(scope=w.scope, name=name)[0] == w.target
    assert Resolver(scope=w.scope).resolve("Jonny", kind="person").entity == w.target
    entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=merge.public_id)
    assert entity_find(scope=w.scope, name="Jonny")[0] == w.source


def test_an_undo_keeps_what_the_target_gained_since_and_tolerates_rows_forgotten_since(cast, world):
    w = world
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    later = _fact(w.scope, w.target, "likes", "chess", at(2025, 1))
    Mention.objects.filter(entity=w.target, episode=w.e3).delete()  # as forgetting e3 would
    entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=merge.public_id)
    assert Fact.objects.get(pk=later.pk).subject == w.target
    assert Fact.objects.get(pk=w.dup.pk).status == FactStatus.ACTIVE and Fact.objects.get(pk=w.dup.pk).subject == w.source


def test_an_undo_is_refused_when_a_moved_row_or_a_settled_collision_changed_since(cast, world):
    w = world
    merge = entity_merge(principal=cast.p_editor, scope=w.scope, source=w.source, target=w.target)
    fact_retract(scope=w.scope, fact_public_id=w.kept.public_id, actor=cast.p_editor)
    with pytest.raises(Conflict, match="changed since"):
        entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=merge.public_id)
    fact_restore(scope=w.scope, fact_public_id=w.kept.public_id, actor=cast.p_editor)
    Fact.objects.filter(pk=w.acme.pk).update(subject=w.ann)  # moved on by hand
    with pytest.raises(Conflict, match="changed since"):
        entity_merge_undo(principal=cast.p_editor, scope=w.scope, merge_id=merge.public_id)
    assert EntityMerge.objects.get().undone_at is None and Entity.objects.get(pk=w.source.pk).merged_into == w.target
