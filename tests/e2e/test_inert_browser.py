"""Stored content is inert on every page: hostile names, texts, values and token names (stored
through the services, tests/hostile.py) are shown as text in the pages, the SVG timeline and the
admin. No script runs (a dialog, a page error or a CSP violation fails the test: the Guard in
tests/e2e/conftest.py; `window.__pwned` stays unset), no element is injected (no id a payload
carries), no link is `javascript:`, and a long value does not push the page sideways."""

import pytest
from playwright.sync_api import expect

from memories.models import Entity, Episode, Fact
from accounts.models import ApiToken, AuditEvent, Team
from memories.models import Scope
from tests.e2e.conftest import DESKTOP, PHONE
from tests.hostile import MARKER_IDS, hostile_world

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# What a page must show of the payloads as text (their markup, visible), and must not have done.
INERT = """(markers) => ({
  pwned: window.__pwned !== undefined,
  injected: markers.filter((id) => document.getElementById(id) !== null),
  scripted_links: [...document.querySelectorAll("a[href]")].filter((a) => a.protocol === "javascript:").map((a) => a.outerHTML),
  overflow: document.scrollingElement.scrollWidth - window.innerWidth,
  text: document.body.innerText + [...document.querySelectorAll("input, textarea")].map((f) => f.value).join(" "),
  wide: [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
    .slice(0, 5).map((e) => e.outerHTML.slice(0, 120)),
})"""


@pytest.fixture
def hostile(cast):
    return hostile_world(cast)


def assert_inert(page, path: str, *, shows: str = "onerror", layout: bool = True, shot: str = "") -> None:
    page.goto(path)
    page.wait_for_load_state("networkidle")
    if shot:
        page.screenshot(path=str(shot), full_page=True)
    found = page.evaluate(INERT, list(MARKER_IDS))
    assert found["pwned"] is False, path
    assert found["injected"] == [], path
    assert found["scripted_links"] == [], path
    assert shows in found["text"], f"{path} does not show the stored value as text"
    if layout:
        assert found["overflow"] <= 0, f"{path} scrolls sideways by {found['overflow']}px: {found['wide']}"


def test_hostile_values_are_text_on_every_page(open_as, hostile, screenshots):
    w = hostile
    page = open_as("owner", "pw-owner-123")
    for name, path in {
        "scopes": "/",
        "scope": "/s/evil/",
        "search": "/s/evil/?q=Lisbon",
        "entity": f"/s/evil/entities/{w.person.public_id}/",
        "episode": f"/s/evil/episodes/{w.episode.public_id}/",
        "forget": f"/s/evil/episodes/{w.episode.public_id}/forget",
        "review": "/s/evil/review/",
        "team": "/teams/evil-team/",
    }.items():
        assert_inert(page, path, shot=screenshots / f"hostile-{name}-desktop.png")
    timeline = page.goto(f"/s/evil/entities/{w.person.public_id}/")
    assert timeline.ok
    expect(page.locator("svg g.bar title", has_text="<script").first).to_be_attached()  # the SVG's text, as text
    page.goto("/teams/evil-team/")
    expect(page.locator("#tokens")).to_contain_text('<b id="pwn-b">tok</b>')
    expect(page.locator("#audit")).to_contain_text("evil")


def test_hostile_values_are_text_on_a_phone(open_as, hostile, screenshots):
    page = open_as("owner", "pw-owner-123", PHONE)
    for name, path in {
        "scope": "/s/evil/",
        "entity": f"/s/evil/entities/{hostile.person.public_id}/",
        "episode": f"/s/evil/episodes/{hostile.episode.public_id}/",
        "team": "/teams/evil-team/",
    }.items():
        assert_inert(page, path, shot=screenshots / f"hostile-{name}-phone.png")


def test_hostile_values_are_text_in_the_admin(open_as, hostile):
    w = hostile
    page = open_as("operator", "pw-operator-123", DESKTOP)
    fact = Fact.objects.filter(scope=w.evil, value__contains="<script").first()
    audit = AuditEvent.objects.filter(scope=w.evil, action="fact.correct").first()
    rows = {
        "memories/scope": Scope.objects.get(pk=w.evil.pk),
        "memories/entity": Entity.objects.get(pk=w.person.pk),
        "memories/episode": Episode.objects.get(pk=w.episode.pk),
        "memories/fact": fact,
        "accounts/team": Team.objects.get(pk=w.evil_team.pk),
        "accounts/apitoken": ApiToken.objects.get(pk=w.token.token.pk),
        "accounts/auditevent": audit,
    }
    assert_inert(page, "/admin/", shows="Scopes", layout=False)
    assert_inert(page, f"/admin/accounts/user/{w.owner.pk}/change/", shows="owner", layout=False)
    for model, row in rows.items():
        shows = {"accounts/apitoken": "pwn-b", "accounts/auditevent": "fact.correct"}.get(model, "<")
        assert_inert(page, f"/admin/{model}/", shows=shows)
        assert_inert(page, f"/admin/{model}/{row.pk}/change/", shows="<")
