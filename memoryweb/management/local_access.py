"""`serve`'s local access for the CLI: while the server runs, the CLI user's memory commands on
this machine use it (`memoryweb/local_server.py`) instead of loading the embedding model each time.

The server issues, through `token_issue` (so audited, and so a limit, never a grant), two tokens
for the CLI user (MEMORYWEB_CLI_USER, else the first admin): a read-only one over the scopes the
user may read and a read+write one over those they may write. Every REFRESH_SECONDS a thread
compares those sets with the memberships of now; when they changed (a scope was created, a
membership given or taken) or a token nears its expiry, it issues new tokens, rewrites the file
and revokes the old ones. When the server stops, its tokens are revoked and the file removed; a
server killed before that leaves tokens that the next `serve` revokes (and the file it replaces).
`MEMORYWEB_LOCAL_ACCESS=false` turns it off.
"""

import logging
import os
import signal
import threading
from contextlib import contextmanager
from datetime import timedelta

from django.db import close_old_connections, connection
from django.utils import timezone

from accounts.models import ApiToken
from accounts.permissions import Access, Principal
from accounts.services import cli_user
from accounts.tokens import token_issue, token_revoke
from memoryweb import local_server
from memoryweb.env import env_bool
from memories.scopes import scopes_for

log = logging.getLogger(__name__)

REFRESH_SECONDS = 5.0
TOKEN_LIFETIME = timedelta(days=30)
RENEW_BEFORE = timedelta(days=1)
TOKEN_NAME = "local CLI (memoryweb serve)"
_ACCESS = {local_server.READ: Access.READ, local_server.WRITE: Access.WRITE}


@contextmanager
def local_access(url: str):
    """Advertise this server and keep its local tokens fresh for as long as the block runs."""
    if not env_bool("MEMORYWEB_LOCAL_ACCESS", True):
        yield
        return
    keeper = _Keeper(url)
    keeper.revoke_stale()
    keeper.refresh()
    thread = threading.Thread(target=keeper.loop, name="memoryweb-local-access", daemon=True)
    thread.start()
    # uvicorn re-raises a SIGTERM it handled once it has shut down; as SystemExit, this block's cleanup still runs.
    previous = signal.signal(signal.SIGTERM, _exit) if threading.current_thread() is threading.main_thread() else None
    try:
        yield
    finally:
        keeper.stop.set()
        thread.join(timeout=REFRESH_SECONDS * 2)
        keeper.withdraw()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _exit(signum, frame):
    raise SystemExit(128 + signum)


class _Keeper:
    def __init__(self, url: str) -> None:
        self.url = url
        self.user = cli_user(None)
        self.principal = Principal(user=self.user)
        self.issued: dict[str, tuple[ApiToken, str, list[str]]] = {}  # access → (token, secret, scope slugs)
        self.stop = threading.Event()
        self.advertised = False

    def loop(self) -> None:
        while not self.stop.wait(REFRESH_SECONDS):
            try:
                close_old_connections()
                self.refresh()
            except Exception:  # a database hiccup must not end the refreshing, nor the server
                log.exception("Refreshing the local CLI tokens failed; trying again in %s s.", REFRESH_SECONDS)
            finally:
                connection.close()

    def refresh(self) -> None:
        replaced = []
        renew_at = timezone.now() + RENEW_BEFORE
        for name, access in _ACCESS.items():
            scopes = list(scopes_for(self.principal, access).order_by("slug"))
            slugs = [s.slug for s in scopes]
            current = self.issued.get(name)
            if current is not None and current[2] == slugs and current[0].expires_at > renew_at:
                continue
            if current is not None:
                replaced.append(current[0])
                del self.issued[name]
            if scopes:
                issued = token_issue(
                    actor=self.principal, user=self.user, name=TOKEN_NAME, scopes=scopes, can_write=access is Access.WRITE,
                    expires_at=timezone.now() + TOKEN_LIFETIME,
                )
                self.issued[name] = (issued.token, issued.secret, slugs)
        # Rewritten when it changed, and when the file was lost (another serve on this home stopped).
        if replaced or not self.advertised or local_server.read_raw() is None:
            self._advertise()
            self.advertised = True
        for token in replaced:
            token_revoke(token=token, actor=self.principal)

    def _advertise(self) -> None:
        local_server.advertise({
            "url": self.url, "pid": os.getpid(), "database": local_server.database_identity(),
            "user": self.user.username, "default_user": not os.environ.get("MEMORYWEB_CLI_USER", "").strip(),
            "tokens": {
                name: {"token": secret, "prefix": token.prefix, "scopes": slugs}
                for name, (token, secret, slugs) in self.issued.items()
            },
        })

    def revoke_stale(self) -> None:
        """Revoke the tokens a server on this database left behind when it was killed."""
        info = local_server.read_raw()
        if info is None or info.get("database") != local_server.database_identity():
            return
        prefixes = [grant.get("prefix") for grant in (info.get("tokens") or {}).values()]
        for token in ApiToken.objects.filter(user=self.user, name=TOKEN_NAME, prefix__in=prefixes, revoked_at=None):
            token_revoke(token=token, actor=self.principal)

    def withdraw(self) -> None:
        local_server.withdraw(os.getpid())
        for token, _secret, _slugs in self.issued.values():
            token_revoke(token=token, actor=self.principal)
        self.issued.clear()
