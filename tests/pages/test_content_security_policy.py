"""Every response carries the Content-Security-Policy (settings.py, last block): the pages, the
login form, the admin, the API and its errors. Scripts and styles from our origin only (no
'unsafe-inline', no 'unsafe-eval'), no plugins, no framing, forms post only to us. The
templates hold no inline script, event handler or style attribute for the policy to refuse (the
browser tests fail on any refusal: tests/e2e/conftest.py)."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.django_db

REQUIRED = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy(response) -> dict[str, list[str]]:
    header = response.headers.get("Content-Security-Policy")
    assert header, f"{response.request['PATH_INFO']} answered without a Content-Security-Policy"
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


def assert_strict(response) -> None:
    directives = policy(response)
    for name, value in REQUIRED.items():
        assert value in directives.get(name, []), (name, directives.get(name))
    for name in ("script-src", "style-src", "default-src"):
        assert "'unsafe-inline'" not in directives[name] and "'unsafe-eval'" not in directives[name], (name, directives[name])


def test_pages_admin_and_api_answer_with_the_policy(pages, cast, memory):
    operator = Client()
    operator.force_login(cast.owner.__class__.objects.create_superuser("operator", password="pw-operator-123"))
    responses = [
        Client().get("/login/"),
        pages.owner.get("/"),
        pages.owner.get("/s/alpha/?q=where"),
        pages.owner.get("/s/alpha/", headers={"HX-Request": "true", "HX-Target": "results"}, data={"q": "where"}),
        pages.owner.get("/s/alpha/review/"),
        pages.owner.get("/teams/team-a/"),
        pages.outsider.get("/s/alpha/"),  # a 404 page
        operator.get("/admin/"),
        operator.get("/admin/memories/fact/"),
        Client().get("/api/v1/scopes"),  # a JSON 401
    ]
    assert [r.status_code for r in responses] == [200, 200, 200, 200, 200, 200, 404, 200, 200, 401]
    for response in responses:
        assert_strict(response)


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I), "an inline <script>"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "an event-handler attribute"),
    (re.compile(r"\shx-on[:-]", re.I), "an hx-on attribute (htmx evals it)"),
    (re.compile(r"\sstyle\s*=", re.I), "a style attribute"),
    (re.compile(r"javascript:", re.I), "a javascript: URL"),
    (re.compile(r"\|\s*safe\b|{%\s*autoescape\s+off"), "unescaped output"),
]


def test_no_template_holds_what_the_policy_refuses():
    found = []
    for template in sorted(Path(settings.BASE_DIR, "templates").rglob("*.html")):
        text = template.read_text()
        for pattern, what in INLINE:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{template.relative_to(settings.BASE_DIR)}:{line}: {what}")
    assert not found, "\n".join(found)
