"""Tombstones: what an erasure erased, kept as keyed hashes so that a restore can erase it again.

A digest is HMAC-SHA256 (Django's `salted_hmac`) under the deployment's SECRET_KEY, so a backup
that carries tombstones reveals nothing: without the key, no one can hash a list of names and
match them. `key_id` names the key (a digest of a fixed string), so a restore on a database with
another key says it cannot match them instead of silently matching nothing; SECRET_KEY_FALLBACKS
are tried too, as Django does for its own signatures when the key is rotated.

Keys hashed (docs/ARCHITECTURE.md, "Erasure survives restore"):
- an episode's public id;
- a turn's session external id and turn external id (ingest's idempotency key);
- an episode's text, whitespace-collapsed and case-folded, with the time it was said (so an
  identical sentence said another time by someone else is not taken for it);
- a person's normalised names and aliases (`normalize_name`).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.utils.crypto import salted_hmac

from accounts.permissions import Principal
from memories.models import Episode, Scope, Tombstone, TombstoneKind, Turn

_SALT = "memoryweb.tombstone"


def _digest(value: str, secret: str) -> str:
    return salted_hmac(_SALT, value, secret=secret, algorithm="sha256").hexdigest()


def key_id(secret: str | None = None) -> str:
    """A short name for the key digests are made with (never the key itself)."""
    return _digest("key-id", secret or settings.SECRET_KEY)[:16]


def secrets_by_key_id() -> dict[str, str]:
    """The keys this deployment can match tombstones with: SECRET_KEY and its fallbacks."""
    keys = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return {key_id(secret): secret for secret in keys}


def _text_key(text: str, occurred_at: datetime | None) -> str:
    said = occurred_at.isoformat() if occurred_at is not None else ""
    return " ".join((text or "").split()).casefold() + "\x1f" + said


def _turn_key(session_external_id: str, turn_external_id: str) -> str:
    return f"{session_external_id}\x1f{turn_external_id}"


@dataclass
class ErasedKeys:
    """The plain keys of what one erasure removes, gathered before the rows go; hashed on `record`."""

    episodes: set[str] = field(default_factory=set)
    turns: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)

    def add_episodes(self, episodes: Iterable[Episode], turns: Iterable[Turn]) -> None:
        for episode in episodes:
            self.episodes.add(str(episode.public_id))
            self.texts.add(_text_key(episode.text, episode.occurred_at))
        for turn in turns:
            self.turns.add(_turn_key(turn.session.external_id, turn.external_id))
            self.texts.add(_text_key(turn.text, turn.occurred_at))

    def add_names(self, names: Iterable[str]) -> None:
        self.names |= {name for name in names if name}


def tombstone_record(
    *, scope: Scope, kind: str, erasure_id, erased_at: datetime, principal: Principal, keys: ErasedKeys,
) -> Tombstone:
    """Store the tombstone of an erasure (inside its transaction: a rolled-back erasure leaves none)."""
    secret = settings.SECRET_KEY
    return Tombstone.objects.create(
        public_id=erasure_id, scope=scope, origin=scope.public_id, kind=TombstoneKind(kind), erased_at=erased_at,
        erased_by=principal.label, key_id=key_id(secret),
        **{part: sorted(_digest(value, secret) for value in getattr(keys, part)) for part in ("episodes", "turns", "texts", "names")},
    )


@dataclass(frozen=True)
class Hasher:
    """Digests of rows under one key, to compare with the tombstones made with it."""

    secret: str

    def episode_id(self, public_id) -> str:
        return _digest(str(public_id), self.secret)

    def text(self, text: str, occurred_at: datetime | None) -> str:
        return _digest(_text_key(text, occurred_at), self.secret)

    def turn(self, session_external_id: str, turn_external_id: str) -> str:
        return _digest(_turn_key(session_external_id, turn_external_id), self.secret)

    def name(self, normalized: str) -> str:
        return _digest(normalized, self.secret)
