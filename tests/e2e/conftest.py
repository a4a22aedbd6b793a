"""Browser tests: Playwright (sync API) driving Debian's chromium against pytest-django's live
server (one for the session, on the test database, committed rows flushed after each test).

Never `playwright install`: the browser is /usr/bin/chromium (`.ci/run` installs it with apt)."""

import os
from pathlib import Path

import pytest

from memories.models import Entity
from memories.scopes import scope_update
from memories.services.ingest import remember

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an asyncio loop running on this thread; Django's ORM refuses
    # to run where a loop runs unless told that this (test) thread is not serving async code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where the screenshots go: $MEMORYWEB_SCREENSHOTS, else the test run's output folder."""
    folder = os.environ.get("MEMORYWEB_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


# Runs in every page before its own scripts (an init script is not subject to the page's CSP):
# a blocked script, style or frame becomes a console error the guard below fails the test on, and
# `alert`/`confirm`/`prompt` are left to Playwright, whose dialog event fails the test too.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`Content Security Policy violation: ${event.violatedDirective} blocked ${event.blockedURI || "inline"} (${event.sample}; ${event.target && event.target.outerHTML && event.target.outerHTML.slice(0, 200)}) at ${event.sourceFile}:${event.lineNumber}`);
});
"""


class Guard:
    """What went wrong in a browser context: CSP violations (reported by the page or by Chromium
    itself on the console), uncaught script errors and dialogs (a hostile value's `alert`)."""

    def __init__(self):
        self.problems: list[str] = []

    def watch(self, context) -> None:
        context.add_init_script(REPORT_VIOLATIONS)
        context.on("console", self._console)
        context.on("weberror", lambda error: self.problems.append(f"page error: {error.error}"))
        context.on("dialog", self._dialog)

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.problems.append(f"console: {message.text}")

    def _dialog(self, dialog) -> None:
        self.problems.append(f"dialog ({dialog.type}): {dialog.message}")
        dialog.dismiss()

    def check(self) -> None:
        problems, self.problems = self.problems, []
        assert not problems, "the browser reported:\n" + "\n".join(problems)


@pytest.fixture
def new_page(browser, live_server):
    """`new_page(viewport=DESKTOP)`: a fresh, signed-out browser page on the live server, watched
    by a Guard: the test fails at teardown on any CSP violation, script error or dialog."""
    guard = Guard()
    contexts = []

    def open_page(viewport: dict = DESKTOP):
        context = browser.new_context(viewport=viewport, base_url=live_server.url)
        context.set_default_timeout(15_000)
        guard.watch(context)
        contexts.append(context)
        return context.new_page()

    open_page.guard = guard
    yield open_page
    for context in contexts:
        context.close()
    guard.check()


@pytest.fixture
def open_as(new_page, live_server):
    """`open_as(user, password, viewport=DESKTOP)`: a fresh browser page, signed in through the login form."""

    def open_page(username: str, password: str, viewport: dict = DESKTOP):
        page = new_page(viewport)
        page.goto("/login/")
        page.get_by_label("User name").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(f"{live_server.url}/")
        return page

    open_page.guard = new_page.guard
    return open_page


def remember_alpha(cast, *, review_initech: bool = False):
    """Alpha knows where ankesh lived and worked and what Kim said in a chat (committed, so
    extraction has run in-process); with `review_initech`, alpha reviews before recall from
    the last statement on, so "I work at Initech" waits in the review queue."""
    said = lambda text, **kw: remember(scope=cast.scope_a, text=text, actor=cast.p_owner, **kw)  # noqa: E731
    said("I live in San Francisco", speaker="ankesh", occurred_at="2024-01-10")
    said("I moved to New York", speaker="ankesh", occurred_at="2025-02-10")
    said("Hi, I am Kim", speaker="kim", session_id="chat-1")
    said("I adopted a cat called Miso", speaker="kim", session_id="chat-1")
    if review_initech:
        scope_update(principal=cast.p_owner, scope=cast.scope_a, review_before_recall=True)
    said("I work at Initech", speaker="ankesh", occurred_at="2025-03-01")
    cast.ankesh = Entity.objects.get(scope=cast.scope_a, name__iexact="ankesh")
    return cast
