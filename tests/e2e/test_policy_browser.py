"""The browser tests' own alarms work: an inline handler the policy refuses, and a dialog, are
reported by the Guard (tests/e2e/conftest.py) that fails every browser test; axe-core flags an
unlabelled field (tests/e2e/test_accessibility_browser.py relies on it)."""

import pytest
from playwright.sync_api import expect

from tests.e2e.test_accessibility_browser import blocking_violations

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_guard_reports_a_refused_inline_script_and_a_dialog(open_as, cast):
    page = open_as("owner", "pw-owner-123")
    page.evaluate("""document.querySelector("main").insertAdjacentHTML("beforeend", '<img src="/nowhere" onerror="window.__ran = 1">')""")
    page.wait_for_timeout(200)
    assert page.evaluate("window.__ran") is None  # refused by script-src 'self'
    page.evaluate("setTimeout(() => alert('hello'))")
    page.wait_for_timeout(200)
    problems, open_as.guard.problems = open_as.guard.problems, []
    assert any("Content Security Policy" in p and "script-src" in p for p in problems), problems
    assert any(p.startswith("dialog (alert): hello") for p in problems), problems


def test_axe_flags_an_unlabelled_field(open_as, cast):
    page = open_as("owner", "pw-owner-123")
    page.evaluate("""document.querySelector("main").insertAdjacentHTML("beforeend", '<input type="text" name="nameless">')""")
    assert any(v.startswith("label (critical)") for v in blocking_violations(page))


def test_the_api_docs_page_works_under_the_policy(open_as, cast):
    """Swagger UI comes from ninja's static files (ninja is an installed app), not a CDN."""
    page = open_as("owner", "pw-owner-123")
    page.goto("/api/v1/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("memoryweb")
    expect(page.locator(".opblock").first).to_be_visible()
