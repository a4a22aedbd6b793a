"""The pages in a real browser: log in, search as you type, remember and watch the episode
finish, open an entity, correct a fact and see the timeline change, retract and restore, and a
viewer who gets no edit control. Screenshots of each main page at desktop and phone width."""

import re

import pytest
from playwright.sync_api import expect

from memories.models import Episode
from tests.e2e.conftest import DESKTOP, PHONE, remember_alpha

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(cast):
    return remember_alpha(cast)


def shoot(page, screenshots, name: str) -> None:
    page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)


def test_log_in_and_see_the_scopes(open_as, new_page, world, screenshots):
    login = new_page(DESKTOP)
    login.goto("/s/alpha/")
    expect(login).to_have_url(re.compile(r"/login/\?next="))
    shoot(login, screenshots, "login-desktop")
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = open_as("owner", "pw-owner-123", viewport)
        expect(page.get_by_role("heading", name="Your scopes")).to_be_visible()
        expect(page.get_by_role("link", name="Alpha", exact=True)).to_be_visible()
        shoot(page, screenshots, f"scopes-{name}")


def test_search_shows_results_as_you_type(open_as, world, screenshots):
    page = open_as("viewer", "pw-viewer-123")
    page.goto("/s/alpha/")
    page.evaluate("window.notReloaded = true")
    page.get_by_label("Ask or search this scope").press_sequentially("where does ankesh live", delay=40)
    result = page.locator("#results .result").first
    expect(result).to_contain_text("New York")
    expect(page.locator("#results")).to_contain_text("similarity")
    assert page.evaluate("window.notReloaded") is True  # swapped in, no page load
    expect(page).to_have_url(re.compile(r"\?q=where"))
    shoot(page, screenshots, "scope-desktop")
    phone = open_as("viewer", "pw-viewer-123", PHONE)
    phone.goto("/s/alpha/?q=where+does+ankesh+live")
    shoot(phone, screenshots, "scope-phone")


def test_remember_a_statement_and_see_its_episode_finish(open_as, world):
    page = open_as("editor", "pw-editor-123")
    page.goto("/s/alpha/")
    page.get_by_label("What should memoryweb remember?").fill("I moved to Lisbon")
    page.get_by_label("Speaker").fill("ankesh")
    page.get_by_role("button", name="Remember").click()
    expect(page.get_by_text("Stored; extraction is")).to_be_visible()
    row = page.locator("#episodes li", has_text="I moved to Lisbon")
    expect(row.locator("[data-episode-status]")).to_have_attribute("data-episode-status", "done")
    expect(page.get_by_label("What should memoryweb remember?")).to_have_value("")
    assert Episode.objects.get(text="I moved to Lisbon").author == world.editor


def test_bad_input_is_shown_next_to_the_field(open_as, world):
    page = open_as("editor", "pw-editor-123")
    page.goto("/s/alpha/")
    page.get_by_label("What should memoryweb remember?").fill("I moved to Mars")
    page.get_by_label("When it happened").fill("2999-01-01")
    page.get_by_role("button", name="Remember").click()
    expect(page.locator("#remember-error")).to_contain_text("future")


def test_open_an_entity_and_correct_a_fact_on_its_timeline(open_as, world, screenshots):
    page = open_as("editor", "pw-editor-123")
    page.goto("/s/alpha/")
    page.get_by_role("link", name="ankesh").first.click()
    expect(page.get_by_role("heading", name="ankesh")).to_be_visible()
    bars = page.locator("svg g.bar")
    expect(bars.filter(has=page.locator("title", has_text="San Francisco"))).to_have_attribute("data-status", "superseded")
    page.evaluate("window.notReloaded = true")
    page.get_by_label("Correct value").first.fill("Brooklyn")
    page.get_by_role("button", name="Correct").first.click()
    brooklyn = page.locator("svg g.bar.manual", has=page.locator("title", has_text="Brooklyn"))
    expect(brooklyn).to_have_attribute("data-status", "active")
    expect(page.locator("svg g.bar", has=page.locator("title", has_text="New York"))).to_have_attribute("data-status", "superseded")
    expect(page.locator(".audit")).to_contain_text("New York → Brooklyn")
    assert page.evaluate("window.notReloaded") is True
    shoot(page, screenshots, "entity-desktop")
    phone = open_as("editor", "pw-editor-123", PHONE)
    phone.goto(f"/s/alpha/entities/{world.ankesh.public_id}/")
    shoot(phone, screenshots, "entity-phone")


def test_retract_and_restore_a_fact(open_as, world):
    page = open_as("owner", "pw-owner-123")
    page.goto(f"/s/alpha/entities/{world.ankesh.public_id}/")
    fact = page.locator(".fact", has_text="Initech")
    fact.get_by_label("Reason").fill("never worked there")
    fact.get_by_role("button", name="Retract").click()
    expect(page.locator(".fact", has_text="Initech")).to_have_count(0)
    retracted = page.locator("svg g.bar.retracted", has=page.locator("title", has_text="Initech"))
    expect(retracted.locator("line.strike")).to_have_count(1)
    expect(page.locator(".audit")).to_contain_text("never worked there")
    page.get_by_role("button", name="Restore works_at Initech").click()
    expect(page.locator(".fact", has_text="Initech")).to_have_count(1)
    expect(page.locator(".audit")).to_contain_text("fact.restore")


def test_the_episode_page_with_its_conversation(open_as, world, screenshots):
    episode = Episode.objects.get(text="I adopted a cat called Miso")
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = open_as("owner", "pw-owner-123", viewport)
        page.goto(f"/s/alpha/episodes/{episode.public_id}/")
        expect(page.locator("[data-episode-status]")).to_have_attribute("data-episode-status", "done")
        expect(page.locator(".turns")).to_contain_text("Hi, I am Kim")
        shoot(page, screenshots, f"episode-{name}")


def test_a_viewer_sees_no_edit_control(open_as, world):
    page = open_as("viewer", "pw-viewer-123")
    page.goto(f"/s/alpha/entities/{world.ankesh.public_id}/")
    expect(page.locator(".fact").first).to_be_visible()
    for name in ("Correct", "Retract", "Set"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("^Restore"))).to_have_count(0)
    page.goto("/s/alpha/")
    expect(page.get_by_label("What should memoryweb remember?")).to_have_count(0)
    episode = Episode.objects.filter(scope=world.scope_a).first()
    page.goto(f"/s/alpha/episodes/{episode.public_id}/")
    expect(page.get_by_role("link", name=re.compile("Forget"))).to_have_count(0)
