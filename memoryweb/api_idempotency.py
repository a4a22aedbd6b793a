"""`@idempotent_write`: an API write handler that honours the `Idempotency-Key` header.

Put it under the route decorator of a write:

    @router.post("/scopes/{slug}/remember", response={202: IngestOut, **ERRORS})
    @idempotent_write
    def remember_text(request, slug: str, payload: RememberIn): ...

The header is added to the operation (and its OpenAPI). Without it the handler runs as before;
with it, `accounts.idempotency.idempotent` runs the handler at most once per caller and key and
answers a retry with the first status and body (the request is its path parameters and its
validated body, so `{"text": "x"}` and `{"text": "x", "speaker": ""}` are the same request).
"""

import functools
from collections.abc import Callable

from django.http import HttpRequest
from ninja import Header
from ninja.responses import Status
from ninja.utils import contribute_operation_args
from pydantic import BaseModel

from accounts.idempotency import KEY_MAX_LENGTH, idempotent

HEADER = "Idempotency-Key"


def idempotent_write(handler: Callable) -> Callable:
    @functools.wraps(handler)
    def write(request: HttpRequest, *, idempotency_key: str | None = None, **values):
        def run() -> tuple[int, object]:
            result = handler(request, **values)
            return (result.status_code, result.value) if isinstance(result, Status) else (200, result)

        body = {name: value.model_dump(mode="json") if isinstance(value, BaseModel) else value for name, value in values.items()}
        status, data = idempotent(
            principal=request.auth, key=idempotency_key, operation=f"api.{handler.__name__}", body=body, run=run,
        )
        return Status(status, data)

    contribute_operation_args(write, "idempotency_key", str | None, Header(
        None, alias=HEADER, max_length=KEY_MAX_LENGTH,
        description="Any unique string (a UUID): a retry with the same key and body gets the first answer and writes nothing.",
    ))
    return write
