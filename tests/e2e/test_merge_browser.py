"""Merging two entities in a real browser: choose the other entity with the search box, see the
preview swapped in without a reload, merge and see the target gain the source's facts, undo.
Screenshots of the preview at desktop and phone width."""

import re

import pytest
from playwright.sync_api import expect

from memories.models import Entity
from memories.services.ingest import remember
from tests.e2e.conftest import PHONE
from tests.e2e.test_pages_browser import shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def two(cast):
    """Jonny and Jon Smith, one person told apart (committed, so extraction has run in-process)."""
    remember(scope=cast.scope_a, text="I live in Boston", speaker="Jonny", occurred_at="2024-01-10", actor=cast.p_owner)
    remember(scope=cast.scope_a, text="I work at Initech", speaker="Jon Smith", occurred_at="2024-03-01", actor=cast.p_owner)
    cast.jonny = Entity.objects.get(scope=cast.scope_a, name__iexact="jonny")
    cast.jon = Entity.objects.get(scope=cast.scope_a, name__iexact="jon smith")
    return cast


def test_merge_an_entity_into_another_after_its_preview_then_undo(open_as, two, screenshots):
    jonny, jon = f"/s/alpha/entities/{two.jonny.public_id}/", f"/s/alpha/entities/{two.jon.public_id}/"
    page = open_as("editor", "pw-editor-123")
    page.goto(jonny)
    expect(page.locator(".fact", has_text="Boston")).to_have_count(1)
    page.evaluate("window.notReloaded = true")
    page.get_by_label("Find an entity").press_sequentially("smi", delay=40)
    choices = page.get_by_label("The other entity")
    expect(choices.locator("option")).to_have_count(2)  # "— choose —" and Jon Smith
    choices.select_option(label=f"{two.jon.name} ({two.jon.kind})")
    page.get_by_role("button", name="Preview merge").click()
    preview = page.locator("#merge-preview")
    expect(preview).to_contain_text(f"Merge {two.jonny.name} into {two.jon.name}")
    expect(preview.locator(".facts").first).to_contain_text("Boston")
    assert page.evaluate("window.notReloaded") is True  # swapped in, no page load
    preview.scroll_into_view_if_needed()
    shoot(page, screenshots, "merge-preview-desktop")

    phone = open_as("editor", "pw-editor-123", PHONE)
    phone.goto(f"{jonny}merge/preview?other={two.jon.public_id}&direction=into")  # without htmx: the whole page
    expect(phone.locator("#merge-preview")).to_be_visible()
    shoot(phone, screenshots, "merge-preview-phone")

    preview.get_by_role("button", name=f"Merge {two.jonny.name} into {two.jon.name}").click()
    expect(page).to_have_url(re.compile(re.escape(jon) + "$"))
    expect(page.get_by_role("status")).to_contain_text(f"Merged {two.jonny.name} into {two.jon.name}.")
    expect(page.locator(".fact", has_text="Boston")).to_have_count(1)  # the target gained its facts
    expect(page.locator(".fact", has_text="Initech")).to_have_count(1)
    expect(page.locator("#memory .audit")).to_contain_text("entity.merge: Jonny into Jon Smith")
    shoot(page, screenshots, "merge-done-desktop")
    phone.goto(jonny)  # the merged entity's own page says where it went
    expect(phone.locator(".merged-note")).to_contain_text(f"{two.jonny.name} was merged into {two.jon.name}")
    shoot(phone, screenshots, "merged-source-phone")

    page.get_by_role("button", name=re.compile("^Undo merge")).click()
    expect(page).to_have_url(re.compile(re.escape(jonny) + "$"))
    expect(page.get_by_role("status")).to_contain_text("is its own entity again")
    expect(page.locator(".fact", has_text="Boston")).to_have_count(1)
    page.goto(jon)
    expect(page.locator(".fact", has_text="Boston")).to_have_count(0)
    expect(page.locator(".fact", has_text="Initech")).to_have_count(1)
