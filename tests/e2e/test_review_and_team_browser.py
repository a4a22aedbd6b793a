"""The review queue and the team page in a real browser: approve a held fact with the keyboard
and see it leave the queue; create a token, see its secret once (a reload: gone). Screenshots of
both pages at desktop and phone width."""

import pytest
from playwright.sync_api import expect

from memories.models import Fact, FactStatus
from memories.scopes import scope_update
from memories.services.ingest import remember
from tests.e2e.conftest import PHONE
from tests.e2e.test_pages_browser import shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def held(cast):
    """Alpha reviews before recall: what ankesh said waits (committed, so extraction has run)."""
    scope_update(principal=cast.p_owner, scope=cast.scope_a, review_before_recall=True)
    remember(scope=cast.scope_a, text="I live in Lisbon", speaker="ankesh", occurred_at="2025-01-10", actor=cast.p_owner)
    remember(scope=cast.scope_a, text="I work at Initech", speaker="ankesh", occurred_at="2025-02-01", actor=cast.p_owner)
    return cast


def test_approve_an_item_in_the_review_queue_with_the_keyboard(open_as, held, screenshots):
    page = open_as("owner", "pw-owner-123")
    page.goto("/s/alpha/review/")
    expect(page.locator(".review-item")).to_have_count(2)
    shoot(page, screenshots, "review-desktop")
    page.keyboard.press("j")
    first = page.locator(".review-item").first
    expect(first).to_be_focused()
    expect(first).to_contain_text("Lisbon")
    announce = page.locator("#review-announce")  # the live region a screen reader hears
    expect(announce).to_have_text("Fact 1 of 2: ankesh lives_in Lisbon.")
    expect(first).to_have_attribute("aria-describedby", "review-keys")  # the shortcuts, read with each fact
    page.keyboard.press("x")
    expect(announce).to_have_text("Selected ankesh lives_in Lisbon.")
    page.keyboard.press("x")
    page.keyboard.press("a")
    expect(page.locator("#queue").get_by_role("status")).to_contain_text("Approved: ankesh lives_in Lisbon.")
    expect(announce).to_contain_text("Approved: ankesh lives_in Lisbon.")
    expect(page.locator(".review-item")).to_have_count(1)
    expect(page.locator(".review-item").first).to_be_focused()  # the next one, ready for the next key
    assert Fact.objects.get(value="Lisbon").status == FactStatus.ACTIVE
    page.goto("/s/alpha/?q=where+does+ankesh+live")
    expect(page.locator("#results")).to_contain_text("Lisbon")
    phone = open_as("editor", "pw-editor-123", PHONE)
    phone.goto("/s/alpha/review/")
    shoot(phone, screenshots, "review-phone")


def test_create_a_token_and_see_its_secret_once(open_as, held, screenshots):
    page = open_as("owner", "pw-owner-123")
    page.goto("/")
    page.get_by_text("Teams", exact=True).click()
    page.get_by_role("link", name="team-a").click()
    page.get_by_label("Name", exact=True).fill("my agent")
    page.get_by_label("Alpha alpha", exact=True).check()
    page.get_by_role("button", name="Create token").click()
    secret = page.get_by_label("shown only once")
    expect(secret).to_have_value(__import__("re").compile(r"^mw_[0-9a-f]{12}_"))
    page.get_by_role("button", name="Copy").click()
    expect(page.locator("[data-copy-status]")).not_to_be_empty()
    expect(page.locator("#tokens tbody")).to_contain_text("my agent")
    shoot(page, screenshots, "team-desktop")
    page.reload()
    expect(page.locator("#tokens tbody")).to_contain_text("my agent")
    expect(page.get_by_label("shown only once")).to_have_count(0)
    phone = open_as("owner", "pw-owner-123", PHONE)
    phone.goto("/teams/team-a/")
    shoot(phone, screenshots, "team-phone")
