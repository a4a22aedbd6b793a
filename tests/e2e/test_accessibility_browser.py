"""Every page passes axe-core (its JavaScript, shipped by the axe-playwright-python package and
run through Playwright) with no serious or critical violation, at desktop (1280) and phone (390)
width, with the Content-Security-Policy on; no page scrolls sideways on a phone (the team page's
token table included); focus is visible. A screenshot of each page at each width goes to
$MEMORYWEB_SCREENSHOTS (a11y-<page>-<width>.png), for a person to look at."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from accounts.tokens import token_issue
from memories.models import Episode
from tests.e2e.conftest import DESKTOP, PHONE, remember_alpha

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BLOCKING = {"serious", "critical"}
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture
def world(cast):
    """Alpha with facts, an episode with a conversation, a fact waiting for review and a token."""
    remember_alpha(cast, review_initech=True)
    token_issue(actor=cast.p_owner, user=cast.owner, name="nightly summariser agent", scopes=[cast.scope_a, cast.scope_a2])
    token_issue(actor=cast.p_owner, user=cast.editor, name="editor's laptop", scopes=[cast.scope_a], can_write=True)
    cast.episode = Episode.objects.get(scope=cast.scope_a, text="I adopted a cat called Miso")
    return cast


def pages(w) -> dict[str, str]:
    return {
        "scopes": "/",
        "scope": "/s/alpha/?q=where+does+ankesh+live",
        "entity": f"/s/alpha/entities/{w.ankesh.public_id}/",
        "episode": f"/s/alpha/episodes/{w.episode.public_id}/",
        "forget": f"/s/alpha/episodes/{w.episode.public_id}/forget",
        "review": "/s/alpha/review/",
        "team": "/teams/team-a/",
        "password": "/password/",
    }


def blocking_violations(page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — " + "; ".join(n["target"][0] if isinstance(n["target"][0], str) else str(n["target"]) for n in v["nodes"][:3])
        for v in results.response["violations"]
        if v["impact"] in BLOCKING
    ]


def check(page, path: str, name: str, width: str, screenshots) -> list[str]:
    page.goto(path)
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(screenshots / f"a11y-{name}-{width}.png"), full_page=True)
    problems = [f"{name} at {width}: {v}" for v in blocking_violations(page)]
    sideways = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
    if sideways > 0:
        problems.append(f"{name} at {width}: scrolls sideways by {sideways}px")
    return problems


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_passes_axe(open_as, new_page, world, screenshots, width):
    login = new_page(WIDTHS[width])
    problems = check(login, "/login/", "login", width, screenshots)
    page = open_as("owner", "pw-owner-123", WIDTHS[width])
    for name, path in pages(world).items():
        problems += check(page, path, name, width, screenshots)
    assert not problems, "\n".join(problems)


def test_the_token_table_fits_a_phone(open_as, world):
    page = open_as("owner", "pw-owner-123", PHONE)
    page.goto("/teams/team-a/")
    table = page.locator("#tokens table")
    expect(table).to_contain_text("nightly summariser agent")
    box = table.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    wrap = page.locator("#tokens .table-wrap")
    assert wrap.evaluate("(e) => e.scrollWidth <= e.clientWidth"), "the token table scrolls sideways in its frame"
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    expect(table.locator("td[data-label=Rights]").first).to_be_visible()  # one card per token, each column named


def test_focus_is_visible(open_as, world):
    """Tabbing to a link or button draws the focus outline (pages.css, :focus-visible)."""
    page = open_as("owner", "pw-owner-123")
    page.goto("/s/alpha/review/")
    for _ in range(4):
        page.keyboard.press("Tab")
        outline = page.evaluate("(() => { const s = getComputedStyle(document.activeElement); return [s.outlineStyle, s.outlineWidth]; })()")
        assert outline[0] != "none" and outline[1] != "0px", (page.evaluate("document.activeElement.outerHTML"), outline)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_error_and_lockout_pages_pass_axe(new_page, open_as, world, screenshots, settings, width):
    """The pages a person meets when something is refused: a missing page, another team's scope
    (a 404 too), and the sign-in lockout (429) after too many wrong passwords."""
    settings.MEMORYWEB_LOGIN_FAILURES = 2
    page = open_as("outsider", "pw-outsider-123", WIDTHS[width])
    problems = check(page, "/no-such-page/", "not-found", width, screenshots)
    problems += check(page, "/s/alpha/", "other-team-scope", width, screenshots)
    assert page.locator("[data-status='404']").count() == 1
    guess = new_page(WIDTHS[width])
    for _ in range(settings.MEMORYWEB_LOGIN_FAILURES + 1):
        guess.goto("/login/")
        guess.fill("#id_username", "owner")
        guess.fill("#id_password", "not-the-password")
        guess.click("form button[type=submit], form input[type=submit]")
        guess.wait_for_load_state("networkidle")
    expect(guess.locator("main")).to_contain_text("minutes")
    guess.screenshot(path=str(screenshots / f"a11y-lockout-{width}.png"), full_page=True)
    problems += [f"lockout at {width}: {v}" for v in blocking_violations(guess)]
    assert not problems, "\n".join(problems)
