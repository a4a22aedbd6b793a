"""Erasure of a person: someone asks to be forgotten, and nothing they said or that was said
about them stays in the scope, search index included.

`subject_erase(principal=, scope=, subject=)` finds the person — one of their names or aliases,
exactly, or an entity id; entities merged into theirs are the same person — and erases, in one
transaction holding the scope's indexing lock:
- every episode and turn they said (the speaker is one of their names, case-insensitively) or
  that names them (a Mention, one of their names as a whole word in its text, or being where a
  fact about them came from), with what only those episodes said, by the rules of forgetting one
  episode (`retrieval/forget.py: episodes_erase`: windows rebuilt, term statistics exact, chains
  closed, orphaned entities gone);
- every fact about them, pointing at them, or whose words name them, whatever else supports it;
- their entities, with aliases and vectors; sessions left without a turn;
- the text of audit events about erased rows, and any string naming them in the scope's audit
  events. The audit log keeps one `subject.erase` event: who, when and the counts, never the name.

Decisions (docs/ARCHITECTURE.md, "Erasure of a person"):
- A fact pointing at them ("Caroline has a friend named Maya") is erased, not kept without its
  object: its value and sentence say the name, and "Caroline has a friend" is still about them.
- Names match exactly. Resolution's fuzzy steps (containment, trigram) are right for linking a
  new mention and wrong for deleting: asked for "Maya", they could erase "Mayank". Aliases that
  depend on who speaks ("my sister") are not searched for in text.
- One transaction, not batches: a person's share of a scope is what they said and what was said
  of them, and each step is a few set-wise statements, so it is bounded by them, not the scope;
  all or nothing means no one ever sees half a person, and a failure leaves nothing to resume.
- Team admins only: it deletes other people's words too (the other side of a conversation, an
  episode that named them in passing), which is more than an editor's forgetting of one episode.
  API tokens never administer.
- A dry run does the whole erasure and rolls it back, so its counts are the real ones.
"""

import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from accounts.audit import audit_record
from accounts.models import AuditEvent
from accounts.permissions import Access, Principal, is_team_admin, require
from memoryweb.errors import Conflict, Forbidden, InvalidInput, NotFound
from memories.extraction.lexicon import FIRST_PERSON_PLURAL, SPEAKER_REFERENCES
from memories.models import Entity, EntityAlias, Episode, Fact, FactSupport, Mention, Scope, Session, Turn
from memories.normalize import normalize_name
from memories.services.facts import entity_get
from memories.services.tombstones import ErasedKeys, tombstone_record
from retrieval.forget import audit_scrub, documents_embed_after_commit, episodes_erase
from retrieval.indexing import scope_lock_for_transaction, speakers_refresh
from retrieval.packs import packs_drop

# What the receipt and the audit log say instead of the name. Not a hash: people's names are
# few enough that anyone could hash a list of them and find whom a receipt is about.
ERASED = "[erased]"
# Every count a receipt reports, zeros included, so a dry run and a real erasure read alike.
COUNTED = (
    "people", "episodes", "turns", "sessions", "facts_erased", "facts_kept", "facts_detached", "facts_relinked",
    "facts_reactivated", "mentions", "fact_supports", "entities", "aliases", "documents", "postings", "vectors",
    "windows_rebuilt", "audit_events_scrubbed",
)
# Alias words that name someone only relative to who speaks: never searched for in text.
_RELATIVE_WORDS = SPEAKER_REFERENCES | FIRST_PERSON_PLURAL | {"our", "your", "his", "her", "their"}


@dataclass(frozen=True)
class ErasureReceipt:
    """What erasing a person removed, for the caller and the audit trail: counts, never the name."""

    erasure_id: uuid.UUID
    scope: str
    erased_at: datetime
    erased_by: str
    dry_run: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    subject: str = ERASED

    def as_dict(self) -> dict:
        return {
            "erasure_id": str(self.erasure_id),
            "scope": self.scope,
            "subject": self.subject,
            "erased_at": self.erased_at.isoformat(),
            "erased_by": self.erased_by,
            "dry_run": self.dry_run,
            "counts": dict(self.counts),
        }


@dataclass(frozen=True)
class _Names:
    """A person's names as patterns: `spoken` matches a whole speaker field, `pg` and `py` a name
    as a whole word in a text (PostgreSQL's and Python's regular expressions); None: no name to
    search text for."""

    spoken: str | None
    pg: str | None
    py: re.Pattern | None


def subject_erase(*, principal: Principal, scope: Scope, subject: str, dry_run: bool = False) -> ErasureReceipt:
    """Erase a person from the scope (see the module's docstring) and return the receipt.

    A scope the principal may not read is NotFound; one it may read but not administer (an
    editor, a viewer, any API token) Forbidden; a subject the scope does not know NotFound. With
    `dry_run` nothing is written (the erasure runs and is rolled back) and the receipt counts
    what would go."""
    _authorise(principal=principal, scope=scope)
    counts: Counter[str] = Counter()
    with transaction.atomic():
        # The indexers' lock first, as forgetting takes it: an indexer waiting on it re-reads
        # after our commit, so it cannot index again what we erase.
        scope_lock_for_transaction(scope)
        people = _people(scope=scope, subject=subject)
        keys = ErasedKeys()
        rewritten = people_erase(scope=scope, people=people, counts=counts, keys=keys, label=repr(subject))

        receipt = ErasureReceipt(
            erasure_id=uuid.uuid4(), scope=scope.slug, erased_at=timezone.now(), erased_by=principal.label, dry_run=dry_run,
            counts={key: counts[key] for key in COUNTED},
        )
        if dry_run:
            transaction.set_rollback(True)
        else:
            # Hashes only: restoring a backup taken before now erases them again (retrieval/tombstones.py).
            tombstone_record(scope=scope, kind="subject", erasure_id=receipt.erasure_id, erased_at=receipt.erased_at,
                             principal=principal, keys=keys)
            audit_record(
                principal=principal, action="subject.erase", target_type="subject", target_id=receipt.erasure_id, scope=scope,
                after=receipt.as_dict(),
            )
    if not dry_run:
        documents_embed_after_commit(scope=scope, doc_ids=rewritten, why=f"erasure {receipt.erasure_id}")
    return receipt


def people_erase(*, scope: Scope, people: list[int], counts: Counter, keys: ErasedKeys | None = None, label: str = "them") -> list[int]:
    """Erase the person whose entities are `people` (locked, merged ones included): what they said,
    what names them, their entities; audit strings naming them scrubbed. Call inside a transaction
    holding `scope_lock_for_transaction`. Adds to `counts` and `keys`; returns the documents rewritten."""
    names = _names(people)
    if keys is not None:
        keys.add_names(_known_names(people))
    facts = list(_facts_naming(scope=scope, people=people, names=names).values_list("pk", flat=True))
    episodes = list(_episodes_naming(scope=scope, people=people, names=names, facts=facts).select_for_update().order_by("id"))
    session_ids = {e.session_id for e in episodes if e.session_id}
    # The entities merged into theirs stand for the same person: unlinked, they are orphans
    # like it once the facts and mentions go, and forgetting's orphan rule takes them all.
    Entity.objects.filter(pk__in=people).update(merged_into=None)
    rewritten = episodes_erase(scope=scope, episodes=episodes, counts=counts, facts=facts, entities=people, keys=keys)
    if Entity.objects.filter(pk__in=people).exists():
        raise Conflict(f"Something written meanwhile still refers to {label}: nothing was erased, try again.")
    counts["people"] += len(people)
    counts["sessions"] += _sessions_emptied(session_ids)
    if names.py is not None:
        _audit_names_scrub(scope=scope, names=names, counts=counts)
    speakers_refresh(scope=scope)
    packs_drop(scope=scope)  # BM25's packs hold the erased documents' ids under their words: packed again by healing
    return rewritten


def people_with_merged(*, scope: Scope, entity_ids: list[int]) -> list[int]:
    """These entities and every one merged into them, row-locked."""
    ids, frontier = list(entity_ids), list(entity_ids)
    while frontier:
        frontier = list(
            Entity.objects.in_scope(scope).filter(merged_into_id__in=frontier).exclude(pk__in=ids).values_list("pk", flat=True)
        )
        ids += frontier
    list(Entity.objects.filter(pk__in=ids).select_for_update().order_by("id"))
    return ids


def _authorise(*, principal: Principal, scope: Scope) -> None:
    if principal is None:
        raise Forbidden("Erasing a person is done by a team admin, in whose name it is audited.")
    require(principal, scope, Access.WRITE)  # outsiders: NotFound; viewers: Forbidden
    if principal.token is not None:
        raise Forbidden("API tokens cannot erase a person: a team admin does, from the CLI.")
    if not is_team_admin(principal.user, scope.team):
        raise Forbidden(f"Only admins of team {scope.team.slug!r} can erase a person: it deletes what others said too.")


def _people(*, scope: Scope, subject: str) -> list[int]:
    """The ids of the person's entities, locked: the canonical one and every one merged into it."""
    text = (subject or "").strip()
    if not text:
        raise InvalidInput("Name the person to erase: a name or alias as the memory knows it, or an entity id.")
    person = entity_get(scope=scope, name_or_id=text)
    ids = people_with_merged(scope=scope, entity_ids=[person.pk])
    if not _is_uuid(text) and normalize_name(text) not in _known_names(ids):
        raise NotFound(
            f"No one is named {text!r} in scope {scope.slug!r} (the nearest is {person.name!r}): give a name exactly, or an entity id."
        )
    return ids


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _known_names(entity_ids: list[int]) -> set[str]:
    names = {normalize_name(name) for name in Entity.objects.filter(pk__in=entity_ids).values_list("name", flat=True)}
    names |= set(EntityAlias.objects.filter(entity_id__in=entity_ids).values_list("normalized", flat=True))
    return {name for name in names if name}


def _names(entity_ids: list[int]) -> _Names:
    names = sorted(_known_names(entity_ids), key=len, reverse=True)  # longest first: "maya chen" before "maya"
    spoken = rf"^\s*({'|'.join(_pattern(name) for name in names)})\s*$" if names else None
    written = "|".join(_pattern(name) for name in names if len(name) > 1 and not set(name.split()) & _RELATIVE_WORDS)
    if not written:
        return _Names(spoken=spoken, pg=None, py=None)
    return _Names(
        spoken=spoken, pg=rf"(^|\W)({written})(\W|$)", py=re.compile(rf"(?<!\w)({written})(?!\w)", re.IGNORECASE),
    )


def _pattern(name: str) -> str:
    # re.escape puts a backslash before punctuation only, which PostgreSQL's regular expressions
    # read as the character itself too; any run of spaces matches the one normalize_name left.
    return r"\s+".join(re.escape(word) for word in name.split())


def _facts_naming(*, scope: Scope, people: list[int], names: _Names):
    """Facts about them, pointing at them, or whose words name them."""
    about = Q(subject_id__in=people) | Q(object_entity_id__in=people)
    if names.pg is not None:
        about |= Q(sentence__iregex=names.pg) | Q(value__iregex=names.pg)
    return Fact.objects.in_scope(scope).filter(about)


def _episodes_naming(*, scope: Scope, people: list[int], names: _Names, facts: list[int]):
    """Episodes they said or that name them: speaker, mention, text (theirs or their turn's), or
    being where a fact about them came from."""
    said = Q(pk__in=[])  # matches nothing
    if names.spoken is not None:
        said |= Q(speaker__iregex=names.spoken)
    if names.pg is not None:
        said |= Q(text__iregex=names.pg)
    named = said | Q(pk__in=Mention.objects.filter(scope=scope, entity_id__in=people).values("episode_id"))
    named |= Q(turn_id__in=Turn.objects.in_scope(scope).filter(said).values("pk"))
    named |= Q(pk__in=Fact.objects.filter(pk__in=facts, source_episode__isnull=False).values("source_episode_id"))
    named |= Q(pk__in=FactSupport.objects.filter(fact_id__in=facts).values("episode_id"))
    return Episode.objects.in_scope(scope).filter(named)


def _sessions_emptied(session_ids: set[int]) -> int:
    """Sessions that held only the erased turns: their ids are all that is left of them."""
    empty = (
        Session.objects.filter(pk__in=session_ids)
        .exclude(pk__in=Turn.objects.filter(session_id__in=session_ids).values("session_id"))
        .exclude(pk__in=Episode.objects.filter(session_id__in=session_ids).values("session_id"))
    )
    return empty.delete()[1].get(Session._meta.label, 0)


def _audit_names_scrub(*, scope: Scope, names: _Names, counts: Counter) -> None:
    """Audit events about rows that stay can still quote them (a correction's old value, a
    retraction's reason): every string that names them loses its text."""
    events = (
        AuditEvent.objects.filter(scope=scope)
        .annotate(before_text=Cast("before", TextField()), after_text=Cast("after", TextField()))
        .filter(Q(before_text__iregex=names.pg) | Q(after_text__iregex=names.pg))
    )
    targets, quoted = set(), set()
    for event in events:
        targets.add((event.target_type, event.target_id))
        quoted |= {text for text in _strings([event.before, event.after]) if names.py.search(text)}
    audit_scrub(scope=scope, targets=sorted(targets), counts=counts, only=frozenset(quoted))


def _strings(payload):
    if isinstance(payload, dict):
        payload = list(payload.values())
    if isinstance(payload, list):
        for value in payload:
            yield from _strings(value)
    elif isinstance(payload, str):
        yield payload
