"""Reconciliation: ADD, UPDATE (supersede), DELETE (retract), NOOP; the constraints behind them."""

import pytest
from django.db import IntegrityError, transaction

from memories.extraction.schemas import ReconcileDecision
from memories.models import Entity, Episode, Fact, FactStatus, FactSupport
from memories.normalize import normalize_value
from memories.services.reconcile import ADD, DELETE, NOOP, UPDATE, NewFact, fact_reconcile

from .conftest import at


@pytest.fixture
def ankesh(cast):
    return Entity.objects.create(scope=cast.scope_a, name="ankesh", kind="person")


def _fact(subject, attribute, value, when, **kwargs):
    return NewFact(subject=subject, attribute=attribute, value=value, sentence=f"{subject.name} {attribute} {value}.",
                   valid_from=when, **kwargs)


def _apply(cast, new, answer=None):
    with transaction.atomic():
        return fact_reconcile(scope=cast.scope_a, new=new, episode=None, model_answer=answer)


def _active(subject, attribute):
    return list(Fact.objects.filter(subject=subject, attribute=attribute, status="active").values_list("value", flat=True))


def test_a_first_value_is_added(cast, ankesh):
    change = _apply(cast, _fact(ankesh, "lives_in", "San Francisco", at(2024, 3)))
    assert change.action == ADD and change.fact.status == FactStatus.ACTIVE
    assert change.fact.valid_from == at(2024, 3) and change.fact.valid_to is None


def test_moving_city_supersedes_the_old_one(cast, ankesh):
    old = _apply(cast, _fact(ankesh, "lives_in", "San Francisco", at(2024, 3))).fact
    change = _apply(cast, _fact(ankesh, "lives_in", "New York", at(2024, 9)))
    old.refresh_from_db()
    assert change.action == UPDATE and change.target == old
    assert old.status == FactStatus.SUPERSEDED and old.valid_to == at(2024, 9)
    assert change.fact.supersedes == old and change.fact.status == FactStatus.ACTIVE
    assert _active(ankesh, "lives_in") == ["New York"]
    assert Fact.objects.count() == 2  # nothing deleted


def test_saying_the_same_thing_again_is_a_noop(cast, ankesh):
    first = _apply(cast, _fact(ankesh, "works_at", "Google", at(2024, 3))).fact
    change = _apply(cast, _fact(ankesh, "works_at", " google. ", at(2024, 6)))
    assert change.action == NOOP and change.target == first and change.fact is None
    assert Fact.objects.count() == 1


def test_another_episode_saying_an_active_fact_again_is_recorded_as_support(cast, ankesh):
    first, second = (Episode.objects.create(scope=cast.scope_a, text=t, occurred_at=at(2024, m)) for t, m in (("a", 3), ("b", 6)))
    with transaction.atomic():
        fact = fact_reconcile(scope=cast.scope_a, new=_fact(ankesh, "works_at", "Google", at(2024, 3)), episode=first).fact
        for episode in (second, second, first):  # twice is once; its own source is no support
            change = fact_reconcile(scope=cast.scope_a, new=_fact(ankesh, "works_at", "google", at(2024, 6)), episode=episode)
            assert change.action == NOOP
    assert list(FactSupport.objects.values_list("fact", "episode", "sentence")) == [(fact.pk, second.pk, "ankesh works_at google.")]


def test_a_different_spelling_of_the_same_object_entity_is_a_noop(cast, ankesh):
    new_york = Entity.objects.create(scope=cast.scope_a, name="New York", kind="place")
    _apply(cast, _fact(ankesh, "lives_in", "New York", at(2024, 3), object_entity=new_york))
    change = _apply(cast, _fact(ankesh, "lives_in", "NYC", at(2024, 5), object_entity=new_york))
    assert change.action == NOOP


def test_multi_valued_attributes_accumulate(cast, ankesh):
    _apply(cast, _fact(ankesh, "likes", "football", at(2024, 1)))
    change = _apply(cast, _fact(ankesh, "likes", "chess", at(2024, 2)))
    assert change.action == ADD
    assert sorted(_active(ankesh, "likes")) == ["chess", "football"]


def test_a_negated_fact_retracts_the_matching_active_one_and_removes_nothing(cast, ankesh):
    fact = _apply(cast, _fact(ankesh, "likes", "football", at(2024, 1))).fact
    change = _apply(cast, _fact(ankesh, "likes", "football", at(2024, 6), negated=True))
    fact.refresh_from_db()
    assert change.action == DELETE and change.target == fact
    assert fact.status == FactStatus.RETRACTED and fact.valid_to == at(2024, 6)
    assert Fact.objects.count() == 1


def test_a_negated_fact_with_nothing_to_retract_is_a_noop(cast, ankesh):
    change = _apply(cast, _fact(ankesh, "likes", "golf", at(2024, 6), negated=True))
    assert change.action == NOOP and not Fact.objects.exists()


def test_moved_from_x_to_y_with_nothing_known_records_x_as_history(cast, ankesh):
    change = _apply(cast, _fact(ankesh, "lives_in", "New York", at(2024, 9), previous_value="San Francisco"))
    previous = change.fact.supersedes
    assert change.action == ADD
    assert (previous.value, previous.status, previous.valid_from, previous.valid_to) == (
        "San Francisco", FactStatus.SUPERSEDED, None, at(2024, 9)
    )
    assert _active(ankesh, "lives_in") == ["New York"]


def test_moved_from_x_to_y_when_x_is_known_supersedes_it(cast, ankesh):
    sf = _apply(cast, _fact(ankesh, "lives_in", "San Francisco", at(2024, 3))).fact
    change = _apply(cast, _fact(ankesh, "lives_in", "New York", at(2024, 9), previous_value="San Francisco"))
    assert change.action == UPDATE and change.fact.supersedes == sf
    assert Fact.objects.filter(value="San Francisco").count() == 1


def test_an_older_value_told_late_becomes_history_not_the_current_value(cast, ankesh):
    ny = _apply(cast, _fact(ankesh, "lives_in", "New York", at(2024, 9))).fact
    change = _apply(cast, _fact(ankesh, "lives_in", "San Francisco", at(2024, 3)))
    ny.refresh_from_db()
    assert change.action == UPDATE and change.fact.status == FactStatus.SUPERSEDED
    assert change.fact.valid_to == at(2024, 9)
    assert ny.status == FactStatus.ACTIVE and ny.supersedes == change.fact
    assert _active(ankesh, "lives_in") == ["New York"]


def test_an_older_value_told_late_ends_where_the_next_known_value_began(cast, ankesh):
    # Berlin from 2020, Oslo from 2022, then "Madrid from 2019" told: Madrid ends where Berlin
    # began (not where the active Oslo did), so no two values of the history overlap.
    _apply(cast, _fact(ankesh, "lives_in", "Berlin", at(2020, 1)))
    _apply(cast, _fact(ankesh, "lives_in", "Oslo", at(2022, 1)))
    madrid = _apply(cast, _fact(ankesh, "lives_in", "Madrid", at(2019, 1))).fact
    assert _timeline(ankesh, "lives_in") == [
        ("Madrid", FactStatus.SUPERSEDED, at(2019, 1), at(2020, 1)),
        ("Berlin", FactStatus.SUPERSEDED, at(2020, 1), at(2022, 1)),
        ("Oslo", FactStatus.ACTIVE, at(2022, 1), None),
    ]
    assert Fact.objects.get(value="Berlin").supersedes == madrid
    # Told late inside a known stay: that stay ends where the late value began, and the chain runs through it.
    lisbon = _apply(cast, _fact(ankesh, "lives_in", "Lisbon", at(2021, 1))).fact
    assert _timeline(ankesh, "lives_in") == [
        ("Madrid", FactStatus.SUPERSEDED, at(2019, 1), at(2020, 1)),
        ("Berlin", FactStatus.SUPERSEDED, at(2020, 1), at(2021, 1)),
        ("Lisbon", FactStatus.SUPERSEDED, at(2021, 1), at(2022, 1)),
        ("Oslo", FactStatus.ACTIVE, at(2022, 1), None),
    ]
    assert [lisbon.supersedes.value, Fact.objects.get(value="Oslo").supersedes.value] == ["Berlin", "Lisbon"]


def test_an_old_value_the_history_already_holds_is_a_noop(cast, ankesh):
    _apply(cast, _fact(ankesh, "lives_in", "San Francisco", at(2024, 3)))
    _apply(cast, _fact(ankesh, "lives_in", "New York", at(2024, 9)))
    change = _apply(cast, _fact(ankesh, "lives_in", "san francisco", at(2024, 5)))
    assert change.action == NOOP and change.target.value == "San Francisco"
    assert Fact.objects.count() == 2


def test_attribute_spellings_are_compared_as_one(cast, ankesh):
    from memories.extraction.vocabulary import canonical_attribute

    _apply(cast, _fact(ankesh, canonical_attribute("job_title"), "engineer", at(2024, 1)))
    change = _apply(cast, _fact(ankesh, canonical_attribute("Role"), "senior engineer", at(2024, 5)))
    assert change.action == UPDATE and _active(ankesh, "role") == ["senior engineer"]


def test_a_models_update_decision_is_followed_when_its_target_is_a_candidate(cast, ankesh):
    football = _apply(cast, _fact(ankesh, "likes", "football", at(2024, 1))).fact
    answer = ReconcileDecision(action="UPDATE", target_fact_id=str(football.public_id), reason="tastes changed")
    change = _apply(cast, _fact(ankesh, "likes", "rugby", at(2024, 4)), answer)
    assert (change.action, change.decided_by, change.target) == (UPDATE, "llm", football)
    assert _active(ankesh, "likes") == ["rugby"]


def test_a_models_decision_about_an_unknown_fact_falls_back_to_the_rules(cast, ankesh):
    _apply(cast, _fact(ankesh, "lives_in", "San Francisco", at(2024, 1)))
    other_scope_fact = "00000000-0000-0000-0000-000000000000"
    answer = ReconcileDecision(action="DELETE", target_fact_id=other_scope_fact)
    change = _apply(cast, _fact(ankesh, "lives_in", "New York", at(2024, 4)), answer)
    assert (change.action, change.decided_by) == (UPDATE, "rules")
    assert _active(ankesh, "lives_in") == ["New York"]


def test_a_models_add_of_a_value_active_already_becomes_a_noop(cast, ankesh):
    _apply(cast, _fact(ankesh, "likes", "football", at(2024, 1)))
    change = _apply(cast, _fact(ankesh, "likes", "Football", at(2024, 4)), ReconcileDecision(action="ADD"))
    assert change.action == NOOP and Fact.objects.count() == 1


def test_the_database_refuses_a_second_active_identical_fact(cast, ankesh):
    kwargs = dict(scope=cast.scope_a, subject=ankesh, attribute="likes", value="tea", value_normalized=normalize_value("tea"),
                  sentence="ankesh likes tea.", valid_from=at(2024, 1))
    Fact.objects.create(**kwargs)
    with pytest.raises(IntegrityError), transaction.atomic():
        Fact.objects.create(**kwargs)
    # A superseded copy is fine: only one *active* fact per value.
    Fact.objects.create(**{**kwargs, "status": "superseded", "valid_to": at(2024, 2)})


def test_the_database_refuses_an_ended_fact_without_valid_to_and_a_backwards_interval(cast, ankesh):
    base = dict(scope=cast.scope_a, subject=ankesh, attribute="likes", value="tea", value_normalized="tea", sentence="s")
    with pytest.raises(IntegrityError, match="memories_fact_ended_has_valid_to"), transaction.atomic():
        Fact.objects.create(**base, status="superseded")
    with pytest.raises(IntegrityError, match="memories_fact_interval_ordered"), transaction.atomic():
        Fact.objects.create(**base, valid_from=at(2024, 5), valid_to=at(2024, 1), status="retracted")
    with pytest.raises(IntegrityError, match="memories_fact_status_valid"), transaction.atomic():
        Fact.objects.create(**base, status="deleted", valid_to=at(2024, 1))


def _said(cast, new, episode=None, answer=None):
    """`new` as an episode says it (dated when it holds from): a NOOP keeps that episode as a support."""
    episode = episode or Episode.objects.create(scope=cast.scope_a, text=new.sentence, occurred_at=new.valid_from)
    with transaction.atomic():
        return fact_reconcile(scope=cast.scope_a, new=new, episode=episode, model_answer=answer)


def _timeline(subject, attribute):
    facts = Fact.objects.filter(subject=subject, attribute=attribute).order_by("valid_from", "valid_to", "id")
    return [(f.value, f.status, f.valid_from, f.valid_to) for f in facts]


def _supports(fact):
    return sorted(fact.supports.values_list("episode__text", "valid_from"), key=lambda s: s[1])


def test_a_move_back_told_before_the_move_between_stays_the_current_value(cast, ankesh):
    # Oslo in February, Madrid in March, Oslo again in April: told Oslo, Oslo (April), then Madrid.
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 2)))
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 4)))  # the value held now: support, no new fact
    _said(cast, _fact(ankesh, "lives_in", "Madrid", at(2024, 3)))
    assert _active(ankesh, "lives_in") == ["Oslo"]


def test_the_move_between_becomes_a_stay_and_the_move_back_a_fact_of_its_own(cast, ankesh):
    february = _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 2))).fact
    april = Episode.objects.create(scope=cast.scope_a, text="back in Oslo", occurred_at=at(2024, 4, 9))
    _said(cast, NewFact(subject=ankesh, attribute="lives_in", value="oslo", sentence="Ankesh moved back to Oslo.",
                        valid_from=at(2024, 4)), episode=april)
    change = _said(cast, _fact(ankesh, "lives_in", "Madrid", at(2024, 3)))
    madrid = change.fact
    assert (change.action, change.target) == (UPDATE, february)
    assert _timeline(ankesh, "lives_in") == [
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 2), at(2024, 3)),
        ("Madrid", FactStatus.SUPERSEDED, at(2024, 3), at(2024, 4)),
        ("Oslo", FactStatus.ACTIVE, at(2024, 4), None),
    ]
    restored = Fact.objects.get(status=FactStatus.ACTIVE)
    assert restored.supersedes == madrid and madrid.supersedes == february  # the chain reads back in time
    # April's episode is the restored fact's source, in its own words, and no longer a support.
    assert (restored.source_episode, restored.sentence) == (april, "Ankesh moved back to Oslo.")
    assert not FactSupport.objects.exists()


def test_the_first_support_after_the_move_ends_the_stay_and_earlier_ones_stay_with_the_old_fact(cast, ankesh):
    february = _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 2))).fact
    for month, day in ((2, 20), (6, 1), (4, 1)):  # before the move, then two after it, told out of order
        _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, month, day)))
    _said(cast, _fact(ankesh, "lives_in", "Madrid", at(2024, 3)))
    assert _timeline(ankesh, "lives_in") == [
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 2), at(2024, 3)),
        ("Madrid", FactStatus.SUPERSEDED, at(2024, 3), at(2024, 4)),
        ("Oslo", FactStatus.ACTIVE, at(2024, 4), None),
    ]
    restored = Fact.objects.get(status=FactStatus.ACTIVE)
    assert restored.source_episode.occurred_at == at(2024, 4)
    assert _supports(february) == [("ankesh lives_in Oslo.", at(2024, 2, 20))]
    assert _supports(restored) == [("ankesh lives_in Oslo.", at(2024, 6))]


def test_supports_dated_before_the_move_restore_nothing(cast, ankesh):
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 2)))
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 2, 20)))
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 3)))  # the same moment as the move: not after it
    _said(cast, _fact(ankesh, "lives_in", "Madrid", at(2024, 3)))
    assert _timeline(ankesh, "lives_in") == [
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 2), at(2024, 3)),
        ("Madrid", FactStatus.ACTIVE, at(2024, 3), None),
    ]


def test_a_restored_value_carries_its_later_supports_so_a_second_move_between_is_placed_too(cast, ankesh):
    # Oslo (Feb), Madrid (Mar), Oslo (Apr), Lisbon (May), Oslo (Jun): the Oslos told first, then Madrid, then Lisbon.
    for month in (2, 4, 6):
        _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, month)))
    _said(cast, _fact(ankesh, "lives_in", "Madrid", at(2024, 3)))
    _said(cast, _fact(ankesh, "lives_in", "Lisbon", at(2024, 5)))
    assert _timeline(ankesh, "lives_in") == [
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 2), at(2024, 3)),
        ("Madrid", FactStatus.SUPERSEDED, at(2024, 3), at(2024, 4)),
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 4), at(2024, 5)),
        ("Lisbon", FactStatus.SUPERSEDED, at(2024, 5), at(2024, 6)),
        ("Oslo", FactStatus.ACTIVE, at(2024, 6), None),
    ]


@pytest.mark.parametrize("attribute, back, between", [
    ("works_at", "Google", "Meta"), ("reports_to", "Priya", "Marco"), ("payment_tool", "Stripe", "Adyen"),
])
def test_a_value_said_again_is_restored_for_every_single_valued_relation(cast, ankesh, attribute, back, between):
    _said(cast, _fact(ankesh, attribute, back, at(2024, 1)))
    _said(cast, _fact(ankesh, attribute, back, at(2024, 5)))
    _said(cast, _fact(ankesh, attribute, between, at(2024, 3)))
    assert _timeline(ankesh, attribute) == [
        (back, FactStatus.SUPERSEDED, at(2024, 1), at(2024, 3)),
        (between, FactStatus.SUPERSEDED, at(2024, 3), at(2024, 5)),
        (back, FactStatus.ACTIVE, at(2024, 5), None),
    ]


def test_a_many_valued_value_said_again_is_not_restored_over_a_models_update(cast, ankesh):
    football = _said(cast, _fact(ankesh, "likes", "football", at(2024, 1))).fact
    _said(cast, _fact(ankesh, "likes", "football", at(2024, 5)))
    answer = ReconcileDecision(action="UPDATE", target_fact_id=str(football.public_id), reason="tastes changed")
    _said(cast, _fact(ankesh, "likes", "rugby", at(2024, 3)), answer=answer)
    assert _active(ankesh, "likes") == ["rugby"]


def test_a_correction_arriving_later_corrects_the_restored_value_from_its_start(cast, ankesh):
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 2)))
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 4)))
    _said(cast, _fact(ankesh, "lives_in", "Madrid", at(2024, 3)))
    change = _said(cast, _fact(ankesh, "lives_in", "Bergen", at(2024, 7), corrects="Oslo"))  # "Bergen, not Oslo"
    assert change.action == UPDATE and change.target.valid_from == at(2024, 4)
    assert _timeline(ankesh, "lives_in") == [
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 2), at(2024, 3)),
        ("Madrid", FactStatus.SUPERSEDED, at(2024, 3), at(2024, 4)),
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 4), at(2024, 4)),  # never true: an empty interval
        ("Bergen", FactStatus.ACTIVE, at(2024, 4), None),
    ]


def test_a_correction_does_not_restore_the_wrong_value_from_its_supports(cast, ankesh):
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 2)))
    _said(cast, _fact(ankesh, "lives_in", "Oslo", at(2024, 4)))
    _said(cast, _fact(ankesh, "lives_in", "Madrid", at(2024, 3), corrects="Oslo"))  # "Madrid, not Oslo": Oslo was never true
    assert _timeline(ankesh, "lives_in") == [
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 2), at(2024, 2)),
        ("Madrid", FactStatus.ACTIVE, at(2024, 2), None),
    ]


def test_running_the_episodes_again_changes_nothing_after_a_restore(cast, ankesh):
    said = [(_fact(ankesh, "lives_in", city, when), Episode.objects.create(scope=cast.scope_a, text=city, occurred_at=when))
            for city, when in (("Oslo", at(2024, 2)), ("Oslo", at(2024, 4)), ("Oslo", at(2024, 6)), ("Madrid", at(2024, 3)))]
    for new, episode in said:
        _said(cast, new, episode=episode)
    expected = [
        ("Oslo", FactStatus.SUPERSEDED, at(2024, 2), at(2024, 3)),
        ("Madrid", FactStatus.SUPERSEDED, at(2024, 3), at(2024, 4)),
        ("Oslo", FactStatus.ACTIVE, at(2024, 4), None),
    ]
    assert _timeline(ankesh, "lives_in") == expected
    rows = (list(Fact.objects.values_list("pk", "source_episode", "supersedes", "valid_to")),
            list(FactSupport.objects.values_list("fact", "episode", "valid_from")))
    for new, episode in [*said, *reversed(said)]:
        assert _said(cast, new, episode=episode).action == NOOP
    assert _timeline(ankesh, "lives_in") == expected
    assert (list(Fact.objects.values_list("pk", "source_episode", "supersedes", "valid_to")),
            list(FactSupport.objects.values_list("fact", "episode", "valid_from"))) == rows
