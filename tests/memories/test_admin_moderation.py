"""Moderation in the Django admin: memory rows are view-only, and every change is an action
calling the audited service as the signed-in superuser."""

import pytest
from django.contrib.messages import get_messages

from accounts.models import AuditEvent, Role
from accounts.services import membership_set, user_create
from memories.models import Entity, EntityMerge, Episode, EpisodeStatus, Fact, FactStatus
from memories.services.reconcile import NewFact, fact_reconcile
from memories.services.resolve import Resolver

from .conftest import at


@pytest.fixture
def root(cast):
    return user_create(username="root", password="pw-root-1234", is_admin=True)


@pytest.fixture
def operator(client, root):
    """A superuser's browser; the test decides the superuser's role in team A."""
    client.force_login(root)
    return client


def _role(cast, root, role):
    membership_set(team=cast.team_a, user=root, role=role)


@pytest.fixture
def rows(cast):
    resolver = Resolver(scope=cast.scope_a)
    jonny = resolver.resolve("Jonny", kind="person").entity
    jon = resolver.resolve("Jon Smith", kind="person").entity
    fact = fact_reconcile(scope=cast.scope_a, episode=None, new=NewFact(
        subject=jonny, attribute="likes", value="football", sentence="Jonny likes football.", valid_from=at(2024, 1))).fact
    failed = Episode.objects.create(scope=cast.scope_a, text="it broke", occurred_at=at(2024, 1), status=EpisodeStatus.FAILED,
                                    error="the model timed out", attempts=3)
    return {"jonny": jonny, "jon": jon, "fact": fact, "failed": failed}


def _messages(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def _action(client, model, action, pks, **extra):
    return client.post(f"/admin/memories/{model}/", {"action": action, "_selected_action": pks, **extra}, follow=True)


@pytest.mark.parametrize("path", [
    "memories/episode/?status__exact=failed&q=broke", "memories/entity/?merged=no&q=jonny", "memories/entitymerge/",
    "memories/fact/?status__exact=active&provenance__exact=extracted&q=football", "accounts/auditevent/?action=fact.retract",
])
def test_the_memory_models_and_the_audit_log_are_listed_filtered_and_searched(operator, rows, path):
    response = operator.get(f"/admin/{path}")
    assert response.status_code == 200


def test_an_entitys_page_shows_its_aliases_and_offers_no_save(operator, rows):
    page = operator.get(f"/admin/memories/entity/{rows['jonny'].pk}/change/").content.decode()
    assert "Jonny" in page and "jonny" in page  # the alias and its key, in the read-only inline
    assert 'name="_save"' not in page


def test_retract_and_restore_call_the_audited_services(cast, root, operator, rows):
    _role(cast, root, Role.EDITOR)
    fact = rows["fact"]
    response = _action(operator, "fact", "retract", [fact.pk])
    assert response.status_code == 200 and "Retracted: 1." in _messages(response)
    assert Fact.objects.get(pk=fact.pk).status == FactStatus.RETRACTED
    event = AuditEvent.objects.get(action="fact.retract")
    assert event.actor_user == root and event.target_id == str(fact.public_id)
    response = _action(operator, "fact", "restore", [fact.pk])
    assert "Restored: 1." in _messages(response) and Fact.objects.get(pk=fact.pk).status == FactStatus.ACTIVE
    assert AuditEvent.objects.get(action="fact.restore").actor_user == root
    # Restoring an active fact is a Conflict: a message, not a 500.
    response = _action(operator, "fact", "restore", [fact.pk])
    assert response.status_code == 200 and any("is active already" in m for m in _messages(response))


def test_retry_queues_a_failed_episode_again(cast, root, operator, rows):
    _role(cast, root, Role.EDITOR)
    response = _action(operator, "episode", "retry", [rows["failed"].pk])
    assert "Queued again: 1." in _messages(response)
    assert Episode.objects.get(pk=rows["failed"].pk).status == EpisodeStatus.PENDING
    assert AuditEvent.objects.get(action="episode.retry").actor_user == root


def test_merging_two_entities_shows_the_preview_then_merges_and_the_merge_can_be_undone(cast, root, operator, rows):
    _role(cast, root, Role.EDITOR)
    jonny, jon = rows["jonny"], rows["jon"]
    page = _action(operator, "entity", "merge", [jonny.pk, jon.pk])
    text = page.content.decode()
    assert "Merge <strong>Jon Smith</strong> into <strong>Jonny</strong>" in text  # the newer into the older
    swapped = _action(operator, "entity", "merge", [jonny.pk, jon.pk], source=jon.pk, swap="1").content.decode()
    assert "Merge <strong>Jonny</strong> into <strong>Jon Smith</strong>" in swapped and "Facts about Jonny: 1" in swapped
    assert not EntityMerge.objects.exists() and not AuditEvent.objects.exists()  # previews write nothing

    response = _action(operator, "entity", "merge", [jonny.pk, jon.pk], source=jonny.pk, confirm="yes")
    merge = EntityMerge.objects.get()
    assert (merge.source, merge.target, merge.by) == (jonny, jon, root)
    assert any(m.startswith("Merged Jonny into Jon Smith") for m in _messages(response))
    assert Fact.objects.get(pk=rows["fact"].pk).subject == jon
    assert AuditEvent.objects.get(action="entity.merge").actor_user == root

    response = operator.post("/admin/memories/entitymerge/", {"action": "undo", "_selected_action": [merge.pk]}, follow=True)
    assert "Undone: 1." in _messages(response)
    assert Entity.objects.get(pk=jonny.pk).merged_into is None and Fact.objects.get(pk=rows["fact"].pk).subject == jonny
    assert AuditEvent.objects.get(action="entity.unmerge").actor_user == root


def test_merge_needs_exactly_two_entities(cast, root, operator, rows):
    _role(cast, root, Role.EDITOR)
    response = _action(operator, "entity", "merge", [rows["jonny"].pk])
    assert "Select exactly two entities of one scope to merge." in _messages(response)
    assert not EntityMerge.objects.exists()


@pytest.mark.parametrize("model, key, data", [
    ("fact", "fact", {"sentence": "Jonny hates football.", "value": "nothing", "status": "retracted"}),
    ("episode", "failed", {"text": "rewritten", "status": "done"}),
    ("entity", "jonny", {"name": "Renamed"}),
])
def test_a_forged_change_or_delete_post_is_refused(cast, root, operator, rows, model, key, data):
    _role(cast, root, Role.ADMIN)
    row = rows[key]
    before = type(row).objects.filter(pk=row.pk).values().get()
    assert operator.post(f"/admin/memories/{model}/{row.pk}/change/", data).status_code == 403
    assert operator.post(f"/admin/memories/{model}/{row.pk}/delete/", {"post": "yes"}).status_code == 403
    assert operator.post(f"/admin/memories/{model}/add/", data).status_code == 403
    assert type(row).objects.filter(pk=row.pk).values().get() == before
    assert not AuditEvent.objects.exists()


def test_the_audit_log_cannot_be_changed(cast, root, operator, rows):
    _role(cast, root, Role.EDITOR)
    _action(operator, "fact", "retract", [rows["fact"].pk])
    event = AuditEvent.objects.get()
    assert operator.get(f"/admin/accounts/auditevent/{event.pk}/change/").status_code == 200
    assert operator.post(f"/admin/accounts/auditevent/{event.pk}/change/", {"action": "forged"}).status_code == 403
    assert operator.post(f"/admin/accounts/auditevent/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AuditEvent.objects.get().action == "fact.retract"


@pytest.mark.parametrize("role, message", [(Role.VIEWER, "You may not write scope 'alpha'."), (None, "No scope named 'alpha'.")])
def test_a_superuser_without_write_access_to_the_team_is_refused_with_a_message(cast, root, operator, rows, role, message):
    if role:
        _role(cast, root, role)
    fact, jonny, jon = rows["fact"], rows["jonny"], rows["jon"]
    for model, action, pks, extra in [
        ("fact", "retract", [fact.pk], {}),
        ("episode", "retry", [rows["failed"].pk], {}),
        ("entity", "merge", [jonny.pk, jon.pk], {"source": jonny.pk, "confirm": "yes"}),
    ]:
        response = _action(operator, model, action, pks, **extra)
        assert response.status_code == 200
        assert any(message in m for m in _messages(response)), (action, _messages(response))
    assert Fact.objects.get(pk=fact.pk).status == FactStatus.ACTIVE
    assert Episode.objects.get(pk=rows["failed"].pk).status == EpisodeStatus.FAILED
    assert Entity.objects.get(pk=jonny.pk).merged_into is None and not EntityMerge.objects.exists()
    assert not AuditEvent.objects.exists()
