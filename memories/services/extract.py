"""Extraction of one episode: the model reads the raw text; resolution and reconciliation turn
its answer into entities, facts and mentions.

Slow I/O happens first, outside any transaction: the model's extraction, the embeddings of
every name and sentence (one batch), and, with a real language model, its reconcile decisions.
Then one transaction locks the episode, resolves names, reconciles facts, writes mentions and
marks the episode done, so a worker that dies halfway leaves nothing half-written and a second
run finds the episode done. Any failure leaves the raw text as it was and the episode `failed`
with a readable reason; `episode_retry` queues it again.
"""

import logging
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import httpx
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Max, Q
from django.utils import timezone
from pydantic import ValidationError

from accounts.audit import audit_record
from accounts.permissions import Access, Principal, require
from memoryweb.errors import Conflict, NotFound
from memoryweb.providers.embedders import EmbedderError, get_embedder
from memoryweb.providers.failures import ModelError
from memoryweb.providers.llm import LLMError
from memoryweb.queue import enqueue
from memories.extraction import extractors
from memories.extraction.extractors import Extractor
from memories.extraction.offline.amend import (
    CORRECTION_AMONG, CORRECTION_WITHIN, amended, answers_question, correction_read, holds_shape, may_reply, spells_out,
)
from memories.extraction.offline.contrast import marked as contrast_marked
from memories.extraction.schemas import ExtractedFact, Extraction, ReconcileDecision
from memories.extraction.vocabulary import (
    CORRECTION_ATTRIBUTE, CORRECTS_CURRENT, REPLACEMENT_ATTRIBUTE, SINGLE_VALUED_SUFFIXES, canonical_attribute, is_single_valued,
)
from memories.models import EmbeddingTarget, Episode, EpisodeStatus, EntityKind, Fact, FactStatus, Mention, MentionRole, Review, Scope
from memories.normalize import normalize_value
from memories.services.reconcile import FactChange, NewFact, active_candidates, fact_reconcile, same_value
from memories.services.resolve import Resolver, team_name
from memories.services.indexing import queue_index
from memories.services.vectors import Vectors

logger = logging.getLogger("memoryweb.extract")

# Worth retrying later, with backoff: the database was briefly unreachable, two workers
# deadlocked, or a remote model or embedder timed out, was unreachable, rate-limited us or had a
# server error (LLMError / EmbedderError with `retryable`). Invalid model output is not: its client
# re-asked already, so the episode fails and waits for a person; nor are other 4xx answers.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError, ConnectionError, TimeoutError, httpx.TransportError)


# How many times an extraction that failed for a passing reason is tried again (by a Celery worker,
# memories/tasks.py, or a server's background runner, retrieval/background.py).
MAX_RETRIES = 5


class TransientExtractionError(Exception):
    """Extraction failed for a reason that may pass; the episode is marked failed meanwhile."""


_ERROR_LIMIT = 2000
# Who said it when the episode does not say: "I" then means this person.
_UNKNOWN_SPEAKER = "me"


@dataclass
class ExtractionOutcome:
    episode_id: uuid.UUID
    status: str
    error: str = ""
    changes: list[FactChange] = field(default_factory=list)
    facts_dropped: int = 0  # beyond MEMORYWEB_EXTRACT_MAX_FACTS, not stored

    @property
    def facts(self) -> list[Fact]:
        return [c.fact for c in self.changes if c.fact is not None]


def episode_get(*, scope: Scope, episode_public_id) -> Episode:
    try:
        public_id = uuid.UUID(str(episode_public_id))
    except ValueError:
        raise NotFound(f"No episode {episode_public_id!r} in scope {scope.slug!r}.") from None
    episode = Episode.objects.in_scope(scope).filter(public_id=public_id).first()
    if episode is None:
        raise NotFound(f"No episode {episode_public_id!r} in scope {scope.slug!r}.")
    return episode


def episode_claim(*, episode_pk: int, claim_id: str) -> bool:
    """Take an episode for extraction, atomically. Claimable: pending or failed; processing
    under this same claim (the message was redelivered after its worker died, or a retry of
    the same task); processing under a claim gone stale (MEMORYWEB_EXTRACT_STALE_SECONDS)."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.MEMORYWEB_EXTRACT_STALE_SECONDS)
    claimable = Q(status__in=[EpisodeStatus.PENDING, EpisodeStatus.FAILED]) | Q(
        Q(claim_id=claim_id) | Q(claimed_at__lt=stale) | Q(claimed_at__isnull=True), status=EpisodeStatus.PROCESSING
    )
    updated = Episode.objects.filter(claimable, pk=episode_pk).update(
        status=EpisodeStatus.PROCESSING, claim_id=claim_id[:64], claimed_at=now, attempts=F("attempts") + 1
    )
    return updated == 1


def episode_extract(*, episode_pk: int) -> ExtractionOutcome:
    """Extract, resolve and reconcile one episode; a `done` episode is left alone.

    Any failure marks the episode failed with a reason; a transient one then raises
    TransientExtractionError, so the task can try again later."""
    episode = Episode.objects.select_related("scope", "author").get(pk=episode_pk)
    if episode.status == EpisodeStatus.DONE:
        return ExtractionOutcome(episode.public_id, episode.status)
    extractor = None
    try:
        extractor = extractors.extractor_get()
        return _extract(episode, extractor)
    except TRANSIENT_ERRORS as exc:
        outcome = _fail(episode, f"Temporary failure: {_describe(exc)}")
        raise TransientExtractionError(outcome.error) from exc
    except ModelError as exc:
        if isinstance(exc, EmbedderError):
            what = f"The embedder ({settings.EMBEDDER})"
        else:
            what = f"The language model ({getattr(extractor, 'name', settings.LLM_PROVIDER)})"
        outcome = _fail(episode, f"{what} failed: {exc}")
        if exc.retryable:
            raise TransientExtractionError(outcome.error) from exc
        return outcome
    except ValidationError as exc:
        return _fail(episode, f"The language model ({getattr(extractor, 'name', '?')}) returned output that does not fit the schema: {exc}")
    except SoftTimeLimitExceeded:
        raise  # the task's time limit: the task marks the episode (episode_time_out)
    except Exception as exc:
        logger.exception("Extracting episode %s failed", episode.public_id)
        return _fail(episode, f"Extraction failed: {_describe(exc)}")


def extract_test_delay() -> None:
    """Test hook only: MEMORYWEB_TEST_EXTRACT_DELAY seconds of sleep after the claim (the Celery
    task's, the background runner's), so a test can kill a process while it holds an episode.
    Not a setting; never set it in production."""
    delay = os.environ.get("MEMORYWEB_TEST_EXTRACT_DELAY")
    if delay:
        time.sleep(float(delay))


def episode_time_out(*, episode_pk: int) -> ExtractionOutcome:
    """Mark an episode failed because its task ran past its soft time limit (the worker's signal
    may have interrupted a query, so a broken connection is dropped first)."""
    connection.close_if_unusable_or_obsolete()
    episode = Episode.objects.get(pk=episode_pk)
    limit = settings.MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT
    return _fail(episode, f"Extraction took longer than its time limit ({limit} s, MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT); "
                          "retry it, or raise the limit for a slow model.")


def episode_retry(*, scope: Scope, episode_public_id, actor: Principal | None) -> Episode:
    """Queue a failed episode again (also a pending one whose task was lost, or one stuck in
    processing past the stale limit). Audited."""
    require(actor, scope, Access.WRITE)
    episode = episode_get(scope=scope, episode_public_id=episode_public_id)
    stale = timezone.now() - timedelta(seconds=settings.MEMORYWEB_EXTRACT_STALE_SECONDS)
    retryable = Q(status__in=[EpisodeStatus.FAILED, EpisodeStatus.PENDING]) | Q(
        Q(claimed_at__lt=stale) | Q(claimed_at__isnull=True), status=EpisodeStatus.PROCESSING
    )
    with transaction.atomic():
        before = {"status": episode.status, "error": episode.error, "attempts": episode.attempts}
        if Episode.objects.filter(retryable, pk=episode.pk).update(status=EpisodeStatus.PENDING, claim_id="", claimed_at=timezone.now()) != 1:
            episode.refresh_from_db()
            raise Conflict(f"Episode {episode.public_id} is {episode.status}; only failed or pending episodes can be retried.")
        audit_record(
            principal=actor, action="episode.retry", target_type="episode", target_id=episode.public_id, scope=scope,
            before=before, after={"status": EpisodeStatus.PENDING},
        )
        enqueue("memories.extract_episode", episode.pk)
    episode.refresh_from_db()
    return episode


def speaker_name(episode: Episode) -> str:
    """Who "I" is in this episode: its speaker, else the person who stored it."""
    if episode.speaker:
        return episode.speaker
    return episode.author.username if episode.author_id else _UNKNOWN_SPEAKER


def scope_speakers(scope: Scope) -> list[str]:
    """Who has spoken in `scope` (at most SPEAKERS_READ of them): the extractor reads their names as names
    even typed in lowercase ("priya reports to ines"). Read once per process and scope, then only the episodes
    stored since (by id: a short range of the primary key, not the scope's million rows per statement), and
    whole again every SPEAKERS_FRESH seconds (an episode committed late, under a lower id, is seen then).
    Not `retrieval.search.question.scope_speakers` (the index's own list, which answers use): extraction sits
    below retrieval and runs before a statement is indexed."""
    now = time.monotonic()
    read_at, last_id, known = _speakers_seen.get(scope.pk, (now, 0, frozenset()))
    if now - read_at > SPEAKERS_FRESH:
        read_at, last_id, known = now, 0, frozenset()
    if len(known) < SPEAKERS_READ:
        said = Episode.objects.filter(scope=scope, pk__gt=last_id).exclude(speaker="").order_by()
        said = list(said.values_list("speaker").annotate(top=Max("pk"))[: SPEAKERS_READ - len(known)])
        if said:
            known = known | frozenset(speaker for speaker, _ in said)
            last_id = max(last_id, *(top for _, top in said))
    if len(_speakers_seen) >= SPEAKERS_SCOPES and scope.pk not in _speakers_seen:
        _speakers_seen.clear()  # a worker serving very many scopes reads them again rather than growing
    _speakers_seen[scope.pk] = (read_at, last_id, known)
    return sorted(known)


SPEAKERS_READ = 500
SPEAKERS_FRESH = 600  # seconds
SPEAKERS_SCOPES = 4096  # scopes whose speakers a process keeps
_speakers_seen: dict[int, tuple[float, int, frozenset[str]]] = {}  # scope id → (read at, highest episode id read, speakers)


def _extract(episode: Episode, extractor: Extractor) -> ExtractionOutcome:
    scope = episode.scope
    speaker = speaker_name(episode)
    team = team_name(scope)
    people = scope_speakers(scope)
    extraction = extractor.extract(text=episode.text, speaker=speaker, occurred_at=episode.occurred_at, team=team, people=people)
    if not isinstance(extraction, Extraction):
        extraction = Extraction.model_validate(extraction)
    if extractor.is_offline:
        extraction = _amendment_read(episode, extraction, extractor=extractor, team=team, people=people)
    extraction, dropped = _capped(extraction, episode=episode)
    default_from = _not_after(extraction.occurred_at, episode.occurred_at) or episode.occurred_at

    # One model pass for every name and sentence this episode needs, and its own text if missing.
    embedder = get_embedder()
    names = [speaker] + [e.name for e in extraction.entities]
    for fact in extraction.facts:
        names += [fact.subject, fact.object_entity or "", fact.previous_value or ""]
    texts = names + [f.sentence for f in extraction.facts]
    vectors = Vectors(texts, embedder=embedder)

    answers = {} if extractor.is_offline else _model_answers(extractor, scope, speaker, vectors, extraction.facts)

    with transaction.atomic():
        locked = Episode.objects.select_for_update().get(pk=episode.pk)
        if locked.status == EpisodeStatus.DONE:
            return ExtractionOutcome(episode.public_id, locked.status)  # another run finished it meanwhile
        resolver = Resolver(scope=scope, speaker=speaker, vectors=vectors)
        mentions: set[tuple[int, str]] = set()
        speaker_entity = resolver.resolve(speaker, kind=EntityKind.PERSON).entity
        mentions.add((speaker_entity.pk, MentionRole.ACTOR))
        team_entity = resolver.team_entity(team) if team else None
        for entity in extraction.entities:
            mentions.add((resolver.resolve(entity.name, kind=entity.kind).entity.pk, entity.role))

        changes = []
        for index, extracted in enumerate(extraction.facts):
            if canonical_attribute(extracted.attribute) == CORRECTION_ATTRIBUTE:
                extracted = _correction_placed(extracted, scope=scope, resolver=resolver, subjects=[speaker_entity, team_entity],
                                               said_at=episode.occurred_at, text=episode.text, speaker=speaker)
                if extracted is None:
                    continue  # "it's Porto, not Lisbon" with no Lisbon known: nothing to correct
            if canonical_attribute(extracted.attribute) == REPLACEMENT_ATTRIBUTE:
                extracted = _replacement_placed(extracted, scope=scope, resolver=resolver, subjects=[speaker_entity, team_entity])
            new = _resolved(extracted, resolver=resolver, default_from=default_from, said_at=episode.occurred_at,
                            importance=extraction.importance)
            new.attribute = _switch_attribute(scope=scope, new=new) or _attribute_aligned(scope=scope, new=new)
            if new.corrects == CORRECTS_CURRENT:  # "Correction: the offsite is in Porto": the current value was wrong
                # (of a single-valued attribute only: "scratch that, Ines owns localization" does not undo what else Ines owns)
                new.corrects = _current_value(scope=scope, new=new) if is_single_valued(new.attribute) else None
            elif new.corrects:
                new.attribute = _corrected_attribute(scope=scope, new=new)
            mentions.add((new.subject.pk, MentionRole.ACTOR))
            if new.object_entity is not None:
                role = MentionRole.LOCATION if new.object_entity.kind == EntityKind.PLACE else MentionRole.OBJECT
                mentions.add((new.object_entity.pk, role))
            changes.append(fact_reconcile(scope=scope, new=new, episode=episode, model_answer=answers.get(index), **_review_for(scope, new)))

        Mention.objects.bulk_create(
            [Mention(scope=scope, episode=episode, entity_id=pk, role=role) for pk, role in sorted(mentions)],
            ignore_conflicts=True,
        )
        Episode.objects.filter(pk=episode.pk).update(
            status=EpisodeStatus.DONE, error="", claim_id="", processed_at=timezone.now(),
            importance=extraction.importance, location=(extraction.location or "")[:200], facts_dropped=dropped,
        )

    _store_vectors(episode, vectors, resolver)
    if changes:
        queue_index(episode.scope)  # new and superseded facts become searchable
    return ExtractionOutcome(episode.public_id, EpisodeStatus.DONE, changes=changes, facts_dropped=dropped)


def _amendment_read(episode: Episode, extraction: Extraction, *, extractor: Extractor, team: str | None, people: list[str]) -> Extraction:
    """A short correction ("sorry, Wednesday", "scratch that, 36", or a reply that names who said the statement
    or answers their checking question: "Dana it's $2,800", "$200 Nico") corrects the statement just
    before it (the latest of the scope's last CORRECTION_AMONG episodes within CORRECTION_WITHIN, anyone's,
    that `amend.holds_shape`; `amend.amended`): that statement is read again as the correction says it should have been, and each
    fact whose value changed is a correction of the one first read. They take the place of the
    correction's own correction facts; its other facts stay. A checking question answered ("the deposit is $150
    right?") gives the facts of the statement it checked, as answered, beside them. Unchanged when nothing is amended."""
    if len(episode.text or "") > AMEND_LONGEST:
        return extraction  # a message, not a short correction or reply
    if correction_read(episode.text) is None and not may_reply(episode.text, people) and not spells_out(episode.text) \
            and not contrast_marked(episode.text):
        return extraction  # neither opens as a correction nor could correct as a reply: nothing to look up
    earlier = (Episode.objects.filter(scope=episode.scope, occurred_at__gte=episode.occurred_at - CORRECTION_WITHIN)
               .filter(Q(occurred_at__lt=episode.occurred_at) | Q(occurred_at=episode.occurred_at, pk__lt=episode.pk))
               .order_by("-occurred_at", "-pk")[:CORRECTION_AMONG])
    for said in earlier:
        who = speaker_name(said)
        if not holds_shape(said.text, episode.text, previous_speaker=who):
            continue  # chatter in between
        meant = amended(said.text, episode.text, same_speaker=who == speaker_name(episode), previous_speaker=who)
        if meant is None:
            return extraction  # the statement it is about, but which value is not clear: read on its own
        before = extractor.extract(text=said.text, speaker=who, occurred_at=said.occurred_at, team=team, people=people).facts
        after = extractor.extract(text=meant, speaker=who, occurred_at=said.occurred_at, team=team, people=people).facts
        first = {(f.subject.lower(), canonical_attribute(f.attribute)): f.value for f in before}
        corrected = [
            fact.model_copy(update={"corrects": first[key]})
            for fact in after
            if (key := (fact.subject.lower(), canonical_attribute(fact.attribute))) in first
            and normalize_value(first[key]) != normalize_value(fact.value)
        ]
        if answers_question(said.text, episode.text, previous_speaker=who):  # what the question checked, as answered
            corrected += [fact for fact in after if (fact.subject.lower(), canonical_attribute(fact.attribute)) not in first]
        if not corrected:
            return extraction
        # The correction's own facts stay, but not a reply's that only says its value again ("Dana it's 26 with
        # partners" read alone: "dana it: 26 with partners"): the corrected fact says it.
        read = correction_read(episode.text, previous=said.text, previous_speaker=who)
        value = normalize_value(read.value) if read is not None and read.reply else ""
        own = [f for f in extraction.facts if canonical_attribute(f.attribute) != CORRECTION_ATTRIBUTE
               and not (value and f" {value} " in f" {normalize_value(f.value)} ")]
        return extraction.model_copy(update={"facts": corrected + own})
    return extraction


# Longer messages are read on their own: a short correction or reply is a line or two.
AMEND_LONGEST = 400


def _replacement_placed(extracted: ExtractedFact, *, scope: Scope, resolver: Resolver, subjects: list) -> ExtractedFact:
    """"We've replaced New Relic with Honeycomb": the attribute of the subject's (or the
    speaker's, the team's) active fact holding the old tool, so the new one supersedes it;
    `uses` when there is none (the old tool kept: it becomes history, `reconcile`)."""
    old = normalize_value(extracted.previous_value or "")
    for subject in [resolver.find(extracted.subject), *subjects]:
        if subject is None or not old:
            continue
        fact = (Fact.objects.in_scope(scope).filter(subject=subject, status=FactStatus.ACTIVE, value_normalized=old)
                .order_by("-valid_from", "-id").first())
        if fact is not None:
            return extracted.model_copy(update={"subject": fact.subject.name, "attribute": fact.attribute})
    return extracted.model_copy(update={"attribute": "uses"})


# Words that make one event or thing another, not a fuller name of it: "the 2026 offsite" is not
# "the offsite" of 2025, but "the data warehouse" is "the warehouse".
_DISTINGUISHING = re.compile(r"^(?:\d+|spring|summer|autumn|fall|winter|next|last|new|old|first|second|third|q[1-4]|h[12])$")


def _attribute_aligned(*, scope: Scope, new: NewFact) -> str:
    """One thing said in fewer or more words is one attribute: "the offsite will be in Salzburg"
    after "the winter offsite is in Innsbruck" is winter_offsite_place; "the catalog launch
    slipped to 6 October" after "the data catalog launch is on 15 September" is
    data_catalog_launch_date; "the warehouse" after "our data warehouse" is data_warehouse_tool;
    "Ferry Wallet moved to 4 November" after "the Ferry Wallet launch is set for 14 October" is
    ferry_wallet_launch_date. Only within a family of single-valued attributes (…_place, …_tool,
    …_date …) of the same subject, when one attribute's words begin or end the other's; a longer name with a year, a season or
    "next" in front names another event ("the 2026 offsite")."""
    attribute = new.attribute
    if not attribute.endswith(SINGLE_VALUED_SUFFIXES):
        return attribute
    words = attribute.split("_")
    held = list(Fact.objects.in_scope(scope).filter(subject=new.subject, status=FactStatus.ACTIVE, attribute__endswith="_" + words[-1])
                .order_by("-valid_from", "-id").values_list("attribute", flat=True)[:200])
    if attribute in held:
        return attribute
    for other in dict.fromkeys(held):
        mine, theirs = words[:-1], other.split("_")[:-1]
        shorter, longer = sorted([mine, theirs], key=len)
        if not shorter or len(shorter) == len(longer):
            continue
        if longer[-len(shorter):] == shorter:
            extra = longer[: -len(shorter)]  # "the offsite" of "the winter offsite"
        elif longer[: len(shorter)] == shorter:
            extra = longer[len(shorter):]  # "Ferry Wallet" of "the Ferry Wallet launch"
        else:
            continue
        if len(mine) > len(theirs) and (any(_DISTINGUISHING.match(w) for w in extra) or words[-1] == "tool"):
            continue  # "in-game voice chat" is not the team's chat: a longer name of a function is another function
        return other
    return attribute


def _switch_attribute(*, scope: Scope, new: NewFact) -> str | None:
    """A switch names the old value ("the offsite moved from Reykjavik to Tallinn", "we moved our
    builds from TeamCity to Buildkite"): when the subject holds that value now under another
    attribute of a single-valued family (2026_offsite_place, ci_tool), the switch is of that one."""
    old = normalize_value(new.previous_value or "")
    if not old or not new.attribute.endswith(SINGLE_VALUED_SUFFIXES):
        return None
    # the old value as held, or a tool's in fewer words ("from Vault" of "HashiCorp Vault", "from Statuspage" of "Atlassian
    # Statuspage"; not a town said with a place: "from Hull" is not "Humber Quays, Hull")
    said = Q(value_normalized=old) | (Q(attribute__endswith="_tool") & (Q(value_normalized__endswith=f" {old}") | Q(value_normalized__startswith=f"{old} ")))
    held = (Fact.objects.in_scope(scope).filter(said, subject=new.subject, status=FactStatus.ACTIVE)
            .order_by("-valid_from", "-id").values_list("attribute", flat=True)[:20])
    families = [a for a in held if a.endswith(SINGLE_VALUED_SUFFIXES)]
    if not families or new.attribute in families:
        return None
    return families[0]


def _corrected_attribute(*, scope: Scope, new: NewFact) -> str:
    """"Correction: the offsite's in Bled, not Ljubljana" after "the spring offsite is in
    Ljubljana": when the subject holds the wrong value under another attribute only, that one."""
    wrong = normalize_value(new.corrects or "")
    active = Fact.objects.in_scope(scope).filter(subject=new.subject, status=FactStatus.ACTIVE, value_normalized=wrong)
    if not wrong or active.filter(attribute=new.attribute).exists():
        return new.attribute
    other = active.order_by("-valid_from", "-id").first()
    if other is not None and len(new.attribute.split("_")) > len(other.attribute.split("_")):
        return new.attribute  # "the web launcher code is on GitLab, not in Perforce": a thing more specific than the one held
    return other.attribute if other is not None else new.attribute


def _current_value(*, scope: Scope, new: NewFact) -> str | None:
    """The value a correction that names no wrong one replaces: the subject's active value of the
    attribute (None when there is none, or it is the value said now)."""
    fact = (Fact.objects.in_scope(scope).filter(subject=new.subject, attribute=new.attribute, status=FactStatus.ACTIVE)
            .order_by("-valid_from", "-id").first())
    return fact.value if fact is not None and fact.value_normalized != new.value_normalized else None


def _latest_said(*, scope: Scope, subject, speaker: str, value: str, said_at: datetime) -> Fact | None:
    """"Sorry, I meant Thursday": the fact of `subject` from the speaker's last episode that had
    one, within CORRECTION_WITHIN before the correction, the one whose value looks like the new one
    (a day for a day, a number for a number) first. An amount corrects only an amount ("scratch that,
    6,400" is never a tool's new name): when the last episode holds none, the speaker's latest amount.
    A day or a number never replaces a name or words, nor the other way round: "scratch that, it's
    friday 17th" after an event that gave no fact is not where the speaker lives, said months before."""
    rows = list(Fact.objects.in_scope(scope).filter(subject=subject, status=FactStatus.ACTIVE, source_episode__speaker=speaker,
                                                    source_episode__occurred_at__gte=said_at - CORRECTION_WITHIN)
                .exclude(value_normalized=normalize_value(value)).order_by("-source_episode__occurred_at", "-source_episode_id", "-id")[:20])
    if not rows:
        return None
    last = [f for f in rows if f.source_episode_id == rows[0].source_episode_id]
    alike = next((f for f in last if _shape(f.value) == _shape(value)), None)
    if alike is None and _shape(value) == "number":
        return next((f for f in rows if _shape(f.value) == "number"), None)
    if alike is None and _timelike(_shape(value)) != _timelike(_shape(last[0].value)):
        return None
    return alike or last[0]


def _timelike(shape: str) -> bool:
    return shape in ("day", "number")


_WEEKDAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", re.I)


def _shape(value: str) -> str:
    if _WEEKDAY.search(value):
        return "day"
    if re.search(r"\d", value):
        return "number"
    return "name" if value[:1].isupper() else "words"


def _correction_placed(extracted: ExtractedFact, *, scope: Scope, resolver: Resolver, subjects: list, said_at: datetime,
                       text: str = "", speaker: str = "") -> ExtractedFact | None:
    """"Actually, it's Porto, not Lisbon" names no attribute: the one of the active fact, of the
    speaker (or the team), whose value is the wrong one; "Sorry, I meant Porto" names no wrong
    value either: a fact of the speaker's last episode (`CORRECTS_CURRENT`, `_latest_said`). None when there is
    no such fact."""
    current = extracted.corrects == CORRECTS_CURRENT
    if current and (read := correction_read(text)) and read.wrong \
            and normalize_value(read.value) == normalize_value(extracted.value):
        # "Correction to the offsite: it's Glasgow, not Edinburgh, …": the wrong value is named after all
        extracted, current = extracted.model_copy(update={"corrects": read.wrong}), False
    wrong = normalize_value(extracted.corrects or "")
    named = resolver.find(extracted.subject)
    candidates = []
    for subject in [named, *subjects]:
        if subject is None or not wrong:
            continue
        if current:
            found = _latest_said(scope=scope, subject=subject, speaker=speaker, value=extracted.value, said_at=said_at)
            if found is not None:
                candidates.append(found)
            continue
        active = Fact.objects.in_scope(scope).filter(subject=subject, status=FactStatus.ACTIVE)
        fact = (active.filter(value_normalized=wrong).order_by("-valid_from", "-id").first()
                or active.filter(value_normalized__regex=rf"^{re.escape(wrong)},? \d{{4}}$").order_by("-valid_from", "-id").first()
                # "two weeks, not three" of "three weeks", "Thursday, not Wednesday" of "on Wednesday afternoons": the wrong
                # value said as one word of the held one
                or (active.filter(value_normalized__regex=rf"(^| ){re.escape(wrong)}( |$)").order_by("-valid_from", "-id").first()
                    if re.search(r"^\w+$", wrong) else None))
        if fact is not None:  # "not 2 December" of "2 December 2026" too: a date said without its year
            candidates.append(fact)
            break
    if not candidates and not current and (thing := re.sub(r"[^a-z0-9]+", "_", (extracted.corrects or "").lower()).strip("_")):
        # "I was wrong about 1.0: it's 10 November": what was said wrong names the thing (1_0_release_date), not a value
        for subject in [named, *subjects]:
            if subject is None:
                continue
            held = Fact.objects.in_scope(scope).filter(subject=subject, status=FactStatus.ACTIVE, attribute__regex=rf"(^|_){re.escape(thing)}(_|$)")
            fact = next((f for f in held.order_by("-valid_from", "-id")[:20] if _shape(f.value) == _shape(extracted.value)), None)
            if fact is not None:
                candidates.append(fact)
                break
    if current and candidates:
        candidates = [max(candidates, key=lambda f: (f.source_episode.occurred_at, f.source_episode_id, f.id))]  # the latest said
    for fact in candidates[:1]:
        if fact is not None:
            value = extracted.value
            if normalize_value(fact.value) != wrong and re.search(rf"\b{re.escape(extracted.corrects or '')}\b", fact.value, re.I) and _shape(value) == "day":
                value = re.sub(rf"\b{re.escape(extracted.corrects or '')}\b", value, fact.value, flags=re.I)  # "on Thursday afternoons"
            if year := re.fullmatch(r".*?(,? \d{4})", fact.value):
                if not current and not re.search(r"\d{4}", value) and fact.value.lower().startswith((extracted.corrects or "").lower()):
                    value += year[1]  # "9 December, not 2 December" of "2 December 2026": the same year
            sentence = fact.sentence.replace(fact.value, value) if fact.value in fact.sentence else extracted.sentence
            return extracted.model_copy(update={
                "value": value, "subject": fact.subject.name, "attribute": fact.attribute, "sentence": sentence, "corrects": fact.value,
                "object_entity": value if fact.object_entity_id else None,
                "object_kind": fact.object_entity.kind if fact.object_entity_id else "other",
            })
    return None


def _review_for(scope: Scope, new: NewFact) -> dict:
    """Whether a person must see this fact first: every one in a "review before recall" scope
    (held out of every read until approved), or one less confident than the scope's threshold
    (in recall meanwhile)."""
    hold = scope.review_before_recall
    waits = hold or new.confidence < scope.review_threshold
    return {"hold": hold, "review": Review.PENDING if waits else Review.NONE}


def _capped(extraction: Extraction, *, episode: Episode) -> tuple[Extraction, int]:
    """At most MEMORYWEB_EXTRACT_MAX_FACTS facts, in the order given, and how many were dropped.
    Cut before anything is embedded or resolved, so a runaway reply costs nothing downstream."""
    limit = settings.MEMORYWEB_EXTRACT_MAX_FACTS
    dropped = max(0, len(extraction.facts) - limit)
    if not dropped:
        return extraction, 0
    logger.warning("Episode %s: kept the first %d of %d extracted facts, dropped %d", episode.public_id, limit,
                   len(extraction.facts), dropped)
    return extraction.model_copy(update={"facts": extraction.facts[:limit]}), dropped


# A team's switch of tool announced ahead ("we're moving paging from PagerDuty to Rootly on 1 July", said in June) begins
# on the day it names, at most this far after it was said; any other state cannot have begun after someone reported it.
SCHEDULED_AHEAD = timedelta(days=366)


def _not_after(moment: datetime | None, limit: datetime, *, scheduled: bool = False) -> datetime | None:
    """A date a fact begins, made aware (naive means UTC) and no later than when the text was said (`limit`), except a
    `scheduled` one (a tool switched to on a day ahead) at most SCHEDULED_AHEAD ahead."""
    if moment is None:
        return None
    if timezone.is_naive(moment):
        moment = moment.replace(tzinfo=UTC)
    return moment if scheduled and moment <= limit + SCHEDULED_AHEAD else min(moment, limit)


def _scheduled(attribute: str) -> bool:
    """Whether a fact of `attribute` may begin on a day ahead of when it was said: a team's tool (`<function>_tool`, a
    tool in use, a replacement), which a team switches on a day it announces."""
    return attribute in {"uses", REPLACEMENT_ATTRIBUTE} or attribute.endswith("_tool")


def _resolved(extracted: ExtractedFact, *, resolver: Resolver, default_from: datetime, said_at: datetime, importance: float) -> NewFact:
    object_entity = previous_entity = None
    if extracted.object_entity:
        object_entity = resolver.resolve(extracted.object_entity, kind=extracted.object_kind).entity
        if extracted.previous_value and extracted.object_kind != EntityKind.OTHER:
            previous_entity = resolver.resolve(extracted.previous_value, kind=extracted.object_kind).entity
    return NewFact(
        subject=resolver.resolve(extracted.subject).entity,
        attribute=canonical_attribute(extracted.attribute),
        value=extracted.value,
        sentence=extracted.sentence,
        valid_from=_not_after(extracted.valid_from, said_at, scheduled=_scheduled(canonical_attribute(extracted.attribute))) or default_from,
        object_entity=object_entity,
        previous_value=extracted.previous_value,
        previous_entity=previous_entity,
        negated=extracted.negated,
        corrects=extracted.corrects,
        confidence=extracted.confidence,
        importance=extracted.importance if extracted.importance is not None else importance,
    )


def _model_answers(extractor: Extractor, scope: Scope, speaker: str, vectors: Vectors, facts: list[ExtractedFact]) -> dict[int, ReconcileDecision]:
    """Ask the model about each fact that meets active facts, before the transaction (slow).
    Its answers are checked against the facts as they stand inside the transaction."""
    answers = {}
    finder = Resolver(scope=scope, speaker=speaker, vectors=vectors)
    for index, extracted in enumerate(facts):
        subject = finder.find(extracted.subject)
        if subject is None:
            continue  # a new subject has no active facts to weigh
        attribute = canonical_attribute(extracted.attribute)
        candidates = active_candidates(scope=scope, subject=subject, attribute=attribute)[-20:]
        if not candidates or extracted.corrects:
            continue  # a correction is carried out by the rules, like `fact_correct`
        probe = NewFact(subject=subject, attribute=attribute, value=extracted.value, sentence=extracted.sentence, valid_from=None)
        if not extracted.negated and any(same_value(c, probe) for c in candidates):
            continue  # the rules know this one: NOOP
        try:
            answers[index] = extractor.decide(
                fact=extracted,
                candidates=[{"id": str(c.public_id), "attribute": c.attribute, "value": c.value, "sentence": c.sentence} for c in candidates],
            )
        except LLMError as exc:
            logger.warning("The model could not decide on %r (%s); the rules decide", extracted.sentence, exc)
    return answers


def _store_vectors(episode: Episode, vectors: Vectors, resolver: Resolver) -> None:
    """After the commit: entity vectors (for resolution) were computed before, so this is one
    short write. A failure leaves those entities without vectors, not the episode failed.
    Facts are embedded by retrieval's index, which the caller queues."""
    try:
        vectors.store(scope=episode.scope, target_type=EmbeddingTarget.ENTITY, items=[(e.pk, e.name) for e in resolver.created])
    except Exception:
        logger.warning("Storing vectors for episode %s failed", episode.public_id, exc_info=True)


def _describe(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{exc.__class__.__name__}: {text}" if text else exc.__class__.__name__


def _fail(episode: Episode, error: str) -> ExtractionOutcome:
    """Mark the episode failed with a reason; its raw text and turns are not touched."""
    error = error[:_ERROR_LIMIT]
    try:
        Episode.objects.filter(pk=episode.pk).exclude(status=EpisodeStatus.DONE).update(
            status=EpisodeStatus.FAILED, error=error, claim_id=""
        )
    except Exception:
        logger.exception("Could not mark episode %s failed (%s)", episode.public_id, error)
    return ExtractionOutcome(episode.public_id, EpisodeStatus.FAILED, error=error)
