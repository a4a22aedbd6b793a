"""Merging two entities from the entity page: the control and its preview for editors, the merge
and its undo (with the fact documents rewritten both ways), the merged entity's own page, and
the doors' refusals: a viewer's 403, an outsider's 404, the anonymous to the login page, bad
input with the message in the control."""

import re
import uuid
from datetime import UTC, datetime

import pytest

from accounts.models import AuditEvent
from memories.models import Entity, EntityAlias, EntityMerge, Fact
from memories.normalize import normalize_name
from memories.services.indexing import queue_index
from memories.services.merge import entity_merge_preview
from memories.services.reconcile import NewFact, fact_reconcile
from memories.services.resolve import Resolver
from retrieval.models import SearchDocument
from tests.pages.conftest import hx

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


def at(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def _fact(scope, subject, attribute, value, when, *, object_entity=None) -> Fact:
    return fact_reconcile(scope=scope, episode=None, new=NewFact(
        subject=subject, attribute=attribute, value=value, sentence=f"I {attribute.replace('_', ' ')} {value}.",
        valid_from=when, object_entity=object_entity,
    )).fact


@pytest.fixture
def pair(cast, django_capture_on_commit_callbacks):
    """"Jonny" and "Jon Smith" are one person: both like football (a collision), each lives
    somewhere else (a single-valued conflict), Jonny has an alias and Ann knows him."""
    scope = cast.scope_a
    resolver = Resolver(scope=scope)
    p = type("Pair", (), {})()
    p.jonny = resolver.resolve("Jonny", kind="person").entity
    EntityAlias.objects.create(scope=scope, entity=p.jonny, alias="Jonathan S", normalized=normalize_name("Jonathan S"))
    p.jon = resolver.resolve("Jon Smith", kind="person").entity
    p.ann = resolver.resolve("Ann", kind="person").entity
    p.football = _fact(scope, p.jonny, "likes", "football", at(2023, 6))
    p.kept = _fact(scope, p.jon, "likes", "football", at(2024, 2))
    p.boston = _fact(scope, p.jonny, "lives_in", "Boston", at(2024, 1))
    p.nyc = _fact(scope, p.jon, "lives_in", "New York", at(2024, 2))
    p.chess = _fact(scope, p.jonny, "plays", "chess", at(2022, 1))
    p.knows = _fact(scope, p.ann, "knows", "Jonny", at(2024, 1), object_entity=p.jonny)
    with django_capture_on_commit_callbacks(execute=True):
        queue_index(scope)  # index the scope, as extraction would have
    return p


def page_url(entity, slug: str = "alpha") -> str:
    return f"/s/{slug}/entities/{entity.public_id}/"


def preview_url(entity, slug: str = "alpha") -> str:
    return f"/s/{slug}/entities/{entity.public_id}/merge/preview"


def merge_url(entity, slug: str = "alpha") -> str:
    return f"/s/{slug}/entities/{entity.public_id}/merge"


def undo_url(entity, merge, slug: str = "alpha") -> str:
    return f"/s/{slug}/entities/{entity.public_id}/merges/{merge.public_id}/undo"


def document(fact: Fact) -> str:
    return SearchDocument.objects.get(collection="fact", target_id=fact.pk).text


def active_facts_on(page: str) -> set[str]:
    return set(re.findall(r'<li class="fact" id="fact-([0-9a-f-]{36})"', page))


# --- the control --------------------------------------------------------------------------------

@pytest.mark.parametrize("who", ["owner", "editor"])
def test_owners_and_editors_see_the_merge_control_with_the_other_entities(pages, pair, who):
    page = text(getattr(pages, who).get(page_url(pair.jonny)))
    assert "Merge with another entity" in page and 'name="direction" value="into" checked' in page
    assert f'<option value="{pair.jon.public_id}">Jon Smith (person)</option>' in page
    assert f'<option value="{pair.jonny.public_id}"' not in page  # not itself


def test_a_viewer_sees_no_merge_control(pages, pair):
    page = text(pages.viewer.get(page_url(pair.jonny)))
    assert "Merge with another entity" not in page and "merge/preview" not in page and "Undo merge" not in page


def test_the_search_box_narrows_the_choices_fragment(pages, pair):
    response = pages.editor.get(preview_url(pair.jonny), {"q": "smi"}, headers=hx("merge-choices"))
    page = text(response)
    assert response.status_code == 200 and page.lstrip().startswith('<select id="merge-choices"')
    assert "Jon Smith" in page and "Ann" not in page


def test_finding_without_javascript_narrows_the_choices_and_previews_nothing(pages, pair):
    response = pages.editor.get(preview_url(pair.jonny), {"q": "ann", "find": "1"})
    page = text(response)
    assert response.status_code == 200 and f'<option value="{pair.ann.public_id}">' in page
    assert "Jon Smith (person)" not in page and "merge-preview" not in page


# --- the preview --------------------------------------------------------------------------------

def test_the_preview_shows_what_moves_as_the_service_computes_it_and_writes_nothing(pages, cast, pair):
    response = pages.editor.get(preview_url(pair.jonny), {"other": str(pair.jon.public_id)}, headers=hx("merge"))
    page = text(response)
    assert response.status_code == 200 and page.lstrip().startswith('<section class="card" id="merge"')
    plan = entity_merge_preview(principal=cast.p_editor, scope=cast.scope_a, source=pair.jonny, target=pair.jon)
    assert "Merge <strong>Jonny</strong> into <strong>Jon Smith</strong>" in page
    section = page.split("Facts about it")[1].split("Facts naming it")[0]
    assert sorted(f.value for f in plan.facts_as_subject) == ["Boston", "chess", "football"]
    for fact in plan.facts_as_subject:
        assert f'<span class="attr">{fact.attribute}</span> {fact.value}' in section
    assert "Ann <span class=\"attr\">knows</span> Jonny" in page  # the fact naming it
    assert '<span class="alias">Jonathan S</span>' in page and '<span class="alias">Jonny</span>' in page
    assert "football: Jon Smith's stays active" in page  # the collision
    assert "<strong>Boston</strong> (Jonny) and <strong>New York</strong> (Jon Smith)" in page  # the conflict
    assert f'name="other" value="{pair.jon.public_id}"' in page and "Merge Jonny into Jon Smith</button>" in page
    assert not EntityMerge.objects.exists() and not AuditEvent.objects.filter(action="entity.merge").exists()


def test_swapping_the_direction_previews_the_other_way_round(pages, pair):
    page = text(pages.editor.get(preview_url(pair.jonny), {"other": str(pair.jon.public_id), "direction": "from"}, headers=hx("merge")))
    assert "Merge <strong>Jon Smith</strong> into <strong>Jonny</strong>" in page
    assert "Swap: merge Jonny into Jon Smith" in page and 'name="direction" value="from" checked' in page


@pytest.mark.parametrize(("other", "status", "message"), [
    ("self", 409, "An entity cannot be merged into itself."),
    ("unknown", 404, "No entity"),
    ("", 422, "Choose the entity to merge with."),
])
def test_bad_choices_show_the_message_in_the_control_on_preview_and_on_merge(pages, pair, other, status, message):
    value = {"self": str(pair.jonny.public_id), "unknown": str(uuid.uuid4()), "": ""}[other]
    for response in (
        pages.editor.get(preview_url(pair.jonny), {"other": value}, headers=hx("merge")),
        pages.editor.post(merge_url(pair.jonny), {"other": value}, headers=hx("merge")),
        pages.editor.post(merge_url(pair.jonny), {"other": value}),  # without JavaScript: the whole page
    ):
        page = text(response)
        assert response.status_code == status and message in page and 'id="merge-error"' in page
        assert 'id="merge-choices"' in page
    assert not EntityMerge.objects.exists()


def test_another_teams_entity_cannot_be_chosen(pages, pair, foreign):
    response = pages.editor.post(merge_url(pair.jonny), {"other": str(foreign.entity.public_id)}, headers=hx("merge"))
    assert response.status_code == 404 and "No entity" in text(response)
    assert not EntityMerge.objects.exists()


# --- merge and undo -----------------------------------------------------------------------------

@pytest.mark.parametrize("who", ["owner", "editor"])
def test_merge_then_undo_restores_the_page_and_rewrites_the_fact_documents(pages, cast, pair, who):
    client = getattr(pages, who)
    before = text(client.get(page_url(pair.jonny)))
    assert document(pair.chess) == "Jonny: I plays chess."
    response = client.post(merge_url(pair.jonny), {"other": str(pair.jon.public_id), "direction": "into"}, headers=hx("merge"))
    assert response.status_code == 200 and response["HX-Redirect"] == page_url(pair.jon)
    merge = EntityMerge.objects.get()
    assert Entity.objects.get(pk=pair.jonny.pk).merged_into == pair.jon
    assert document(pair.chess) == "Jon Smith: I plays chess."  # the search document names the new subject

    target = text(client.get(page_url(pair.jon)))
    assert "Merged Jonny into Jon Smith." in target  # the message
    assert {str(pair.chess.public_id), str(pair.boston.public_id), str(pair.nyc.public_id)} <= active_facts_on(target)
    assert "was merged into this" in target and undo_url(pair.jon, merge) in target and "Undo merge" in target
    assert "entity.merge: Jonny into Jon Smith" in target  # the audit event, in the recent changes

    source = text(client.get(page_url(pair.jonny)))
    assert "Jonny was merged into" in source and f'href="{page_url(pair.jon)}"' in source
    assert undo_url(pair.jonny, merge) in source and active_facts_on(source) == set()

    undone = client.post(undo_url(pair.jon, merge), headers=hx("merge"))
    assert undone.status_code == 200 and undone["HX-Redirect"] == page_url(pair.jonny)
    assert Entity.objects.get(pk=pair.jonny.pk).merged_into is None
    assert document(pair.chess) == "Jonny: I plays chess."
    after = text(client.get(page_url(pair.jonny)))
    assert "Jonny is its own entity again." in after and "entity.unmerge: Jonny into Jon Smith" in after
    assert active_facts_on(after) == active_facts_on(before) != set()
    assert "Merge with another entity" in after and "was merged into" not in after
    assert list(AuditEvent.objects.filter(target_type="entity").values_list("action", flat=True).order_by("id")) == [
        "entity.merge", "entity.unmerge"]


def test_merging_from_the_target_and_undoing_without_javascript_redirect(pages, pair):
    response = pages.editor.post(merge_url(pair.jon), {"other": str(pair.jonny.public_id), "direction": "from"})
    assert response.status_code == 302 and response["Location"] == page_url(pair.jon)
    merge = EntityMerge.objects.get()
    assert merge.source == pair.jonny and merge.target == pair.jon
    undone = pages.editor.post(undo_url(pair.jonny, merge))
    assert undone.status_code == 302 and undone["Location"] == page_url(pair.jonny)


def test_an_entity_merged_already_cannot_be_merged_again_and_says_so(pages, cast, pair):
    pages.editor.post(merge_url(pair.jonny), {"other": str(pair.jon.public_id)})
    # A stale page of Jonny (merged meanwhile) asks to merge it into Ann.
    response = pages.editor.post(merge_url(pair.jonny), {"other": str(pair.ann.public_id)}, headers=hx("merge"))
    assert response.status_code == 409 and "is merged already" in text(response)
    assert EntityMerge.objects.count() == 1 and Fact.objects.get(pk=pair.chess.pk).subject == pair.jon


def test_a_refused_undo_is_shown_in_the_control(pages, pair):
    pages.editor.post(merge_url(pair.jonny), {"other": str(pair.jon.public_id)})
    merge = EntityMerge.objects.get()
    pages.editor.post(undo_url(pair.jon, merge))
    response = pages.editor.post(undo_url(pair.jon, merge), headers=hx("merge"))
    assert response.status_code == 409 and "was undone already" in text(response) and 'id="undo-error"' in text(response)
    later = pages.editor.post(merge_url(pair.jonny), {"other": str(pair.jon.public_id)})
    assert later.status_code == 302
    pages.editor.post(merge_url(pair.jon), {"other": str(pair.ann.public_id)})  # a later merge involving Jon
    first = EntityMerge.objects.filter(undone_at__isnull=True).order_by("id").first()
    refused = pages.editor.post(undo_url(pair.jon, first))
    assert refused.status_code == 409 and "came later" in text(refused) and "Undo merge" in text(refused)


# --- who may ------------------------------------------------------------------------------------

def test_a_viewer_is_refused_the_preview_the_merge_and_the_undo_even_forged(pages, cast, pair):
    assert pages.viewer.get(preview_url(pair.jonny), {"other": str(pair.jon.public_id)}).status_code == 403
    assert pages.viewer.post(merge_url(pair.jonny), {"other": str(pair.jon.public_id)}, headers=hx("merge")).status_code == 403
    assert not EntityMerge.objects.exists()
    pages.editor.post(merge_url(pair.jonny), {"other": str(pair.jon.public_id)})
    merge = EntityMerge.objects.get()
    assert "Undo merge" not in text(pages.viewer.get(page_url(pair.jon)))  # told of the merge, offered no undo
    assert pages.viewer.post(undo_url(pair.jon, merge)).status_code == 403
    assert EntityMerge.objects.get().undone_at is None


def test_an_outsider_gets_a_404_from_every_merge_door(pages, pair):
    pages.editor.post(merge_url(pair.jonny), {"other": str(pair.jon.public_id)})
    merge = EntityMerge.objects.get()
    for response in (
        pages.outsider.get(page_url(pair.jonny)),
        pages.outsider.get(preview_url(pair.jonny), {"other": str(pair.jon.public_id)}),
        pages.outsider.post(merge_url(pair.jon), {"other": str(pair.ann.public_id)}),
        pages.outsider.post(undo_url(pair.jon, merge)),
    ):
        assert response.status_code == 404
    assert EntityMerge.objects.get().undone_at is None and EntityMerge.objects.count() == 1


def test_an_entity_of_another_teams_scope_is_a_404_through_this_scope(pages, pair, foreign):
    assert pages.editor.get(preview_url(foreign.entity), {"other": str(pair.jon.public_id)}).status_code == 404
    assert pages.editor.post(merge_url(foreign.entity), {"other": str(pair.jon.public_id)}).status_code == 404
    assert not EntityMerge.objects.exists()


def test_the_anonymous_are_sent_to_log_in_from_the_merge_doors(pages, pair):
    fake = type("Merge", (), {"public_id": uuid.uuid4()})()
    for response in (
        pages.anonymous.get(preview_url(pair.jonny), {"other": str(pair.jon.public_id)}),
        pages.anonymous.post(merge_url(pair.jonny), {"other": str(pair.jon.public_id)}),
        pages.anonymous.post(undo_url(pair.jon, fake)),
    ):
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert not EntityMerge.objects.exists()
