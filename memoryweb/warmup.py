"""What the first question would otherwise wait for, loaded when a server process starts: the
embedding model (seconds for the local one) and dateparser's language tables (about 0.1 s the
first time a question holds a date). It runs in a background thread, so the server answers at
once; a failure (a remote embedder that is down) is logged and left to the first request,
which reports it properly. MEMORYWEB_WARM_UP=false turns it off."""

import logging
import threading

from django.conf import settings

logger = logging.getLogger(__name__)


def warm_up() -> None:
    from memoryweb.providers.embedders import get_embedder
    from retrieval import temporal

    try:
        get_embedder().embed(["warming up"])
        temporal.warm_up()
    except Exception as exc:  # the first request will meet the same error and report it
        logger.warning("warm-up failed (%s: %s); the first request will load what it needs", exc.__class__.__name__, exc)


def warm_up_in_background() -> threading.Thread | None:
    if not settings.MEMORYWEB_WARM_UP:
        return None
    thread = threading.Thread(target=warm_up, name="memoryweb-warm-up", daemon=True)
    thread.start()
    return thread
