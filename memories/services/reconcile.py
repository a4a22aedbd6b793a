"""Reconciliation: what one extracted fact does to the active facts of its subject.

ADD      a new active fact beside the others;
UPDATE   supersede: the old fact gets `valid_to` (the new one's `valid_from`) and status
         `superseded`, the new one links to it through `supersedes`. When an episode said the
         old value again after the new one's start (a support dated later: a move back told
         before the move between), the new fact is a stay ending there and the old value is
         active again from that statement, in a fact of its own superseding the stay;
DELETE   retract: the matching active fact gets `valid_to` and status `retracted`;
NOOP     the same value is active already (or this episode said it before).
Nothing is ever deleted. With a language model, the model decides (its answer is checked
against the candidates and overruled by the rules when it makes no sense); offline, the rules
in `decide_by_rules` decide from the attribute (memories/extraction/vocabulary.py).

In a "review before recall" scope (`hold`), a fact that would ADD or UPDATE is written `held`
instead: it ends nothing and no read sees it. When a person approves it, `fact_release`
reconciles it by the rules against the active facts as they stand then, in its own row
(the model's view at extraction time is stale by then). NOOPs and DELETEs apply at once: they
add nothing to what recall returns.

`fact_reconcile` runs inside the caller's transaction and serialises work on one
(subject, attribute) with a transaction-level advisory lock plus row locks on the active facts,
so two workers cannot both supersede the same fact or both add the same value.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from memories.extraction.schemas import ReconcileDecision
from memories.extraction.vocabulary import is_single_subject, is_single_valued
from memories.models import Entity, Episode, Fact, FactStatus, FactSupport, Provenance, Review, Scope
from memories.normalize import normalize_value

ADD, UPDATE, DELETE, NOOP = "ADD", "UPDATE", "DELETE", "NOOP"


@dataclass
class NewFact:
    """An extracted fact with its names resolved to entities."""

    subject: Entity
    attribute: str  # canonical (memories.extraction.vocabulary.canonical_attribute)
    value: str
    sentence: str
    valid_from: datetime | None
    object_entity: Entity | None = None
    previous_value: str | None = None
    previous_entity: Entity | None = None
    negated: bool = False
    confidence: float = 0.9
    importance: float = 0.5
    corrects: str | None = None  # a correction: the wrong value, replaced from its start

    @property
    def value_normalized(self) -> str:
        return normalize_value(self.value)


@dataclass
class Decision:
    action: str
    target: Fact | None = None
    reason: str = ""
    decided_by: str = "rules"


@dataclass
class FactChange:
    """What reconciliation did, for reports and the CLI."""

    action: str
    attribute: str
    value: str
    fact: Fact | None = None  # the fact written (ADD, UPDATE)
    target: Fact | None = None  # the fact superseded, retracted or matched
    reason: str = ""
    decided_by: str = "rules"


def same_value(candidate: Fact, new: NewFact) -> bool:
    if candidate.value_normalized == new.value_normalized:
        return True
    return new.object_entity is not None and candidate.object_entity_id == new.object_entity.pk


def decide_by_rules(*, new: NewFact, candidates: list[Fact]) -> Decision:
    """The offline policy (and the fallback when a model's answer makes no sense)."""
    matching = next((c for c in candidates if same_value(c, new)), None)
    if new.negated:
        if matching is not None:
            return Decision(DELETE, matching, "the text says this is no longer true")
        return Decision(NOOP, None, "negated, and no active fact says it")
    if matching is not None:
        return Decision(NOOP, matching, "the same value is active already")
    if candidates and is_single_valued(new.attribute):
        return Decision(UPDATE, candidates[-1], f"{new.attribute} holds one value at a time")
    return Decision(ADD, None, "a new value" if candidates else "nothing known yet")


def decision_from_model(*, answer: ReconcileDecision | None, new: NewFact, candidates: list[Fact]) -> Decision | None:
    """The model's decision if it is coherent with the current candidates, else None."""
    if answer is None:
        return None
    by_id = {str(c.public_id): c for c in candidates}
    if answer.action in (ADD, UPDATE) and not new.negated:
        matching = next((c for c in candidates if same_value(c, new)), None)
        if matching is not None:
            return Decision(NOOP, matching, "the same value is active already", "llm")  # would duplicate it
    if answer.action == ADD:
        return Decision(ADD, None, answer.reason, "llm")
    target = by_id.get((answer.target_fact_id or "").strip())
    if target is None:
        return None  # no target, or one that is not among the candidates
    return Decision(answer.action, target, answer.reason, "llm")


def active_candidates(*, scope: Scope, subject: Entity, attribute: str, lock: bool = False) -> list[Fact]:
    facts = Fact.objects.in_scope(scope).filter(subject=subject, attribute=attribute, status=FactStatus.ACTIVE)
    if lock:
        facts = facts.select_for_update()
    return list(facts.order_by("valid_from", "id"))


def fact_reconcile(
    *, scope: Scope, new: NewFact, episode: Episode | None, model_answer: ReconcileDecision | None = None,
    provenance: str = Provenance.EXTRACTED, author=None, hold: bool = False, review: str = Review.NONE,
) -> FactChange:
    """Apply one fact (held for review when `hold`; the facts it writes get `review`). Call inside a transaction."""
    lock_subject_attribute(subject=new.subject, attribute=new.attribute)
    candidates = active_candidates(scope=scope, subject=new.subject, attribute=new.attribute, lock=True)

    if episode is not None:
        # Safe to run twice: what this episode wrote before is not written again.
        earlier = Fact.objects.in_scope(scope).filter(
            source_episode=episode, subject=new.subject, attribute=new.attribute, value_normalized=new.value_normalized
        ).first()
        if earlier is not None and not new.negated:
            return FactChange(NOOP, new.attribute, new.value, target=earlier, reason="this episode said it before")

    wrong = next((c for c in candidates if new.corrects and c.value_normalized == normalize_value(new.corrects)), None)
    if wrong is not None and not new.negated:
        return _correct(wrong, new=new, candidates=candidates, scope=scope, episode=episode, provenance=provenance, author=author,
                        review=review)
    decision = decision_from_model(answer=model_answer, new=new, candidates=candidates) or decide_by_rules(
        new=new, candidates=candidates
    )
    change = FactChange(decision.action, new.attribute, new.value, target=decision.target, reason=decision.reason,
                        decided_by=decision.decided_by)
    fields = {"scope": scope, "source_episode": episode, "provenance": provenance, "author": author, "review": review}
    if hold and decision.action in (ADD, UPDATE):
        return _hold(change, new=new, episode=episode, fields=fields)
    change = _apply(change, decision, new=new, candidates=candidates, episode=episode, fields=fields)
    if change.fact is not None and change.fact.status == FactStatus.ACTIVE and is_single_subject(new.attribute):
        _end_other_holders(change.fact)
    return change


def _correct(wrong: Fact, *, new: NewFact, candidates: list[Fact], scope: Scope, episode: Episode | None, provenance: str, author,
             review: str) -> FactChange:
    """"Munich, not Berlin": the wrong fact was never true, so it ends where it began (an empty
    interval, as `fact_correct` does) and the right one takes its place from its start."""
    start = wrong.valid_from or new.valid_from
    fact_end(wrong, status=FactStatus.SUPERSEDED, at=start)
    change = FactChange(UPDATE, new.attribute, new.value, target=wrong, reason=f"a correction of {wrong.value}")
    same = next((c for c in candidates if c.pk != wrong.pk and same_value(c, new)), None)
    if same is not None:
        change.action, change.target = NOOP, same
        _support(same, episode=episode, new=new)
        return change
    corrected = NewFact(**{**new.__dict__, "valid_from": start})
    change.fact = _create(corrected, scope=scope, source_episode=episode, provenance=provenance, author=author, review=review,
                          supersedes=wrong)
    return change


def _end_other_holders(fact: Fact) -> None:
    """owns / leads: one holder per value, so the previous holder's fact ends where this begins."""
    others = (Fact.objects.in_scope(fact.scope).select_for_update()
              .filter(attribute=fact.attribute, value_normalized=fact.value_normalized, status=FactStatus.ACTIVE)
              .exclude(subject=fact.subject).order_by("valid_from", "id"))
    for other in others:
        if fact.valid_from and other.valid_from and other.valid_from > fact.valid_from:
            continue  # told out of order: the other holder came later
        fact_end(other, status=FactStatus.SUPERSEDED, at=fact.valid_from or timezone.now())
        if fact.supersedes_id is None:
            fact.supersedes = other
            fact.save(update_fields=["supersedes", "updated_at"])


def fact_release(*, scope: Scope, fact: Fact) -> FactChange:
    """Reconcile a held fact a person approved, by the rules, writing into its own row: it
    becomes active (superseding the value active now, for a single-valued attribute), history
    (when a newer value is active), or, when its value is active already, a support of that
    fact and ended. Call inside a transaction, with the fact locked."""
    lock_subject_attribute(subject=fact.subject, attribute=fact.attribute)
    candidates = active_candidates(scope=scope, subject=fact.subject, attribute=fact.attribute, lock=True)
    new = NewFact(
        subject=fact.subject, attribute=fact.attribute, value=fact.value, sentence=fact.sentence, valid_from=fact.valid_from,
        object_entity=fact.object_entity, confidence=fact.confidence, importance=fact.importance,
    )
    decision = decide_by_rules(new=new, candidates=candidates)
    change = FactChange(decision.action, new.attribute, new.value, target=decision.target, reason=decision.reason)
    return _apply(change, decision, new=new, candidates=candidates, episode=fact.source_episode, fields={"scope": scope}, row=fact)


def _hold(change: FactChange, *, new: NewFact, episode: Episode | None, fields: dict) -> FactChange:
    waiting = (
        Fact.objects.in_scope(fields["scope"])
        .filter(subject=new.subject, attribute=new.attribute, value_normalized=new.value_normalized, status=FactStatus.HELD)
        .first()
    )
    if waiting is not None:
        change.action, change.target, change.reason = NOOP, waiting, "the same value waits for review already"
        _support(waiting, episode=episode, new=new)
        return change
    change.fact = _create(new, **fields, status=FactStatus.HELD)
    change.reason = f"{change.reason}; held for review"
    return change


def _apply(change: FactChange, decision: Decision, *, new: NewFact, candidates: list[Fact], episode: Episode | None, fields: dict,
           row: Fact | None = None) -> FactChange:
    """Carry out `decision`; with `row` (a held fact being released) the new fact is that row."""
    if decision.action == NOOP:
        if row is not None:
            fact_end(row, status=FactStatus.SUPERSEDED, at=row.valid_from or timezone.now())
        _support(decision.target, episode=episode, new=new)
        return change
    if decision.action == DELETE:
        fact_end(decision.target, status=FactStatus.RETRACTED, at=new.valid_from)
        return change
    if decision.action == UPDATE:
        later = [c for c in candidates if c.valid_from and c.valid_from > new.valid_from]
        if later:
            # Told out of order (an older episode processed after a newer one): the new fact is
            # history, ending where the current one begins; the current one stays active.
            known = _history_covering(scope=fields["scope"], new=new)
            if known is not None:
                change.action, change.target, change.reason = NOOP, known, "the history says so already"
                if row is not None:
                    fact_end(row, status=FactStatus.SUPERSEDED, at=row.valid_from or timezone.now())
                _support(known, episode=episode, new=new)
                return change
            following = _next_known(scope=fields["scope"], new=new) or later[0]
            # Told inside another value's known stay ("Lisbon from 2021" within "Berlin 2020–2022"):
            # that stay ended when this one began, and the chain runs through the new value.
            before = _stay_around(scope=fields["scope"], new=new, following=following)
            if before is not None:
                before.valid_to = new.valid_from
                before.save(update_fields=["valid_to", "updated_at"])
            change.fact = _create(new, **fields, status=FactStatus.SUPERSEDED, valid_to=following.valid_from, supersedes=before, row=row)
            if following.supersedes_id is None or (before is not None and following.supersedes_id == before.pk):
                following.supersedes = change.fact
                following.save(update_fields=["supersedes", "updated_at"])
            change.reason = "older than the active value: recorded as history"
            return change
        ended = [decision.target] if decision.decided_by == "llm" else candidates
        for old in ended:
            fact_end(old, status=FactStatus.SUPERSEDED, at=new.valid_from)
        back = _said_again_after(decision.target, new=new)
        if back is None:
            change.fact = _create(new, **fields, supersedes=decision.target, row=row)
            return change
        # The old value was said again after the new one began ("Oslo" in February and again in
        # April, "Madrid" in March told last): the new value is a stay that ended then, and the
        # old one is current again from that statement.
        change.fact = _create(new, **fields, status=FactStatus.SUPERSEDED, valid_to=back.valid_from, supersedes=decision.target,
                              row=row)
        _restore(decision.target, back=back, after=change.fact)
        change.reason = f"{change.reason}; {decision.target.value} was said again later: current again"
        return change

    # ADD. "Moved from X to Y" with nothing known yet: X becomes history, so the chain shows it.
    supersedes = None
    if new.previous_value and is_single_valued(new.attribute) and normalize_value(new.previous_value) != new.value_normalized:
        supersedes = _previous(new, **fields)
    elif new.previous_value and new.attribute == "uses" and normalize_value(new.previous_value) != new.value_normalized:
        # "we ditched Premiere for DaVinci Resolve", no function said: of what the team uses, the one it replaced ends
        # (or, never said before, becomes history), so "what did we use before DaVinci Resolve?" has its answer
        held = next((c for c in candidates if c.value_normalized == normalize_value(new.previous_value)), None)
        if held is not None:
            fact_end(held, status=FactStatus.SUPERSEDED, at=new.valid_from or timezone.now())
            supersedes = held
        else:
            supersedes = _previous(new, **fields)
    change.fact = _create(new, **fields, supersedes=supersedes, row=row)
    if change.fact is None:
        change.action, change.reason = NOOP, "the same value became active meanwhile"
    return change


def _support(fact: Fact | None, *, episode: Episode | None, new: NewFact) -> None:
    """Record that `episode` said `fact` again: a NOOP writes nothing on the fact, and without
    this row forgetting the fact's first episode would erase what this one said too."""
    if fact is None or episode is None or fact.source_episode_id == episode.pk:
        return
    FactSupport.objects.get_or_create(
        fact=fact, episode=episode, defaults={"scope_id": fact.scope_id, "sentence": new.sentence, "valid_from": new.valid_from}
    )


def _said_again_after(old: Fact, *, new: NewFact) -> FactSupport | None:
    """The first support of `old` (a single-valued fact just ended at the new value's start)
    dated after that start: the old value held again then. The first, not the last: the new
    value can have lasted no longer than that. Supports of unknown date count for nothing."""
    if new.valid_from is None or not is_single_valued(old.attribute):
        return None
    return old.supports.filter(valid_from__gt=new.valid_from).order_by("valid_from", "id").first()


def _restore(old: Fact, *, back: FactSupport, after: Fact) -> Fact:
    """`old`'s value, active again from the support `back` (its episode becomes the source, its
    wording the sentence), superseding `after`, the stay in between. `old` keeps the supports
    dated up to the stay's start; the later ones say the restored fact."""
    restored = Fact.objects.create(
        scope=old.scope, subject=old.subject, attribute=old.attribute, value=old.value, value_normalized=old.value_normalized,
        object_entity=old.object_entity, sentence=back.sentence, valid_from=back.valid_from, supersedes=after,
        source_episode_id=back.episode_id, confidence=old.confidence, importance=old.importance, review=old.review,
    )
    old.supports.filter(valid_from__gt=after.valid_from).exclude(pk=back.pk).update(fact=restored)
    back.delete()  # it is the restored fact's source now
    return restored


def _next_known(*, scope: Scope, new: NewFact) -> Fact | None:
    """The first value known to have begun after a value told late ("Madrid from 2019" told after
    "Berlin 2020–2022" and "Oslo since 2022"): the late one ends where Berlin began, not where
    the active Oslo did, so the history's intervals do not overlap. A value that was never true
    (corrected: it ends where it began) or is retracted or held counts for nothing."""
    return (
        Fact.objects.in_scope(scope)
        .filter(subject=new.subject, attribute=new.attribute, valid_from__gt=new.valid_from,
                status__in=[FactStatus.ACTIVE, FactStatus.SUPERSEDED])
        .exclude(valid_to__lte=F("valid_from"))
        .order_by("valid_from", "id")
        .first()
    )


def _stay_around(*, scope: Scope, new: NewFact, following: Fact) -> Fact | None:
    """An ended value of another value whose stay holds the late one's start, and ends no later
    than the value that follows it: the stay the late value cut short."""
    return (
        Fact.objects.in_scope(scope)
        .filter(subject=new.subject, attribute=new.attribute, status=FactStatus.SUPERSEDED,
                valid_from__lt=new.valid_from, valid_to__gt=new.valid_from, valid_to__lte=following.valid_from)
        .exclude(value_normalized=new.value_normalized)
        .order_by("-valid_from", "-id")
        .first()
    )


def _history_covering(*, scope: Scope, new: NewFact) -> Fact | None:
    """An ended fact with this value whose interval contains the new fact's start."""
    return (
        Fact.objects.in_scope(scope)
        .filter(subject=new.subject, attribute=new.attribute, value_normalized=new.value_normalized, valid_to__gte=new.valid_from)
        .filter(Q(valid_from__isnull=True) | Q(valid_from__lte=new.valid_from))
        .exclude(status=FactStatus.ACTIVE)
        .first()
    )


def lock_subject_attribute(*, subject: Entity, attribute: str) -> None:
    # Row locks cover existing active facts only; this also covers "none active yet", where
    # two transactions would otherwise both ADD. Released at commit.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"memoryweb:fact:{subject.pk}:{attribute}"])


def fact_end(fact: Fact, *, status: str, at: datetime) -> None:
    """End an active fact at `at` (never before it began)."""
    fact.status = status
    fact.valid_to = max(at, fact.valid_from) if fact.valid_from else at
    fact.save(update_fields=["status", "valid_to", "updated_at"])


def _create(new: NewFact, *, status: str = FactStatus.ACTIVE, valid_to: datetime | None = None, supersedes: Fact | None = None,
            row: Fact | None = None, **fields) -> Fact | None:
    if row is not None:  # a held fact released: it takes the place a new one would have
        row.status, row.valid_to, row.supersedes = status, valid_to, supersedes
        row.save(update_fields=["status", "valid_to", "supersedes", "updated_at"])
        return row
    try:
        with transaction.atomic():
            return Fact.objects.create(
                subject=new.subject, attribute=new.attribute, value=new.value, value_normalized=new.value_normalized,
                object_entity=new.object_entity, sentence=new.sentence, valid_from=new.valid_from, valid_to=valid_to,
                status=status, supersedes=supersedes, confidence=new.confidence, importance=new.importance, **fields,
            )
    except IntegrityError:
        if status != FactStatus.ACTIVE:
            raise
        return None  # the one-active-per-value constraint: someone else holds this value


def _previous(new: NewFact, **fields) -> Fact:
    """The value a "from X to Y" statement replaced, as a fact that ended when Y began."""
    value = new.previous_value
    existing = (
        Fact.objects.in_scope(fields["scope"])
        .filter(subject=new.subject, attribute=new.attribute, value_normalized=normalize_value(value))
        .exclude(status__in=[FactStatus.ACTIVE, FactStatus.HELD])
        .order_by("-valid_to", "-id")
        .first()
    )
    if existing is not None:
        return existing
    previous = NewFact(
        subject=new.subject, attribute=new.attribute, value=value, object_entity=new.previous_entity,
        sentence=f"{new.subject.name} {new.attribute.replace('_', ' ')} {value}.",
        valid_from=None,  # when it began is unknown: the text only says when it ended
        confidence=new.confidence, importance=new.importance,
    )
    return _create(previous, status=FactStatus.SUPERSEDED, valid_to=new.valid_from, **fields)
