import pytest
from django.test import Client

from accounts.tokens import token_issue


class Api:
    """A test client for /api/v1 with a bearer token (or none)."""

    def __init__(self, secret: str | None = None):
        self.client = Client()
        self.headers = {"Authorization": f"Bearer {secret}"} if secret else {}

    def get(self, path: str, **params):
        return self.client.get(f"/api/v1{path}", params, headers=self.headers)

    def post(self, path: str, body=None, *, raw: str | None = None, headers: dict | None = None):
        data = raw if raw is not None else ({} if body is None else body)
        kwargs = {"content_type": "application/json", "headers": {**self.headers, **(headers or {})}}
        return self.client.post(f"/api/v1{path}", data, **kwargs)

    def delete(self, path: str, headers: dict | None = None):
        return self.client.delete(f"/api/v1{path}", headers={**self.headers, **(headers or {})})


@pytest.fixture
def tokens(cast):
    """Bearer secrets: the owner's read+write and read-only tokens for alpha, the outsider's for bravo."""
    return {
        "rw": token_issue(actor=cast.p_owner, user=cast.owner, name="rw", scopes=[cast.scope_a], can_write=True).secret,
        "ro": token_issue(actor=cast.p_owner, user=cast.owner, name="ro", scopes=[cast.scope_a]).secret,
        "both": token_issue(actor=cast.p_owner, user=cast.owner, name="both", scopes=[cast.scope_a, cast.scope_a2], can_write=True).secret,
        "outsider": token_issue(actor=cast.p_outsider, user=cast.outsider, name="o", scopes=[cast.scope_b], can_write=True).secret,
        "viewer": token_issue(actor=cast.p_viewer, user=cast.viewer, name="v", scopes=[cast.scope_a]).secret,
    }


@pytest.fixture
def api(tokens):
    return Api(tokens["rw"])
