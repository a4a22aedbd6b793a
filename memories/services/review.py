"""Reviewing what extraction believed: the queue of facts waiting for a person, and approving,
rejecting or correcting them, one at a time or in bulk. Every decision is audited.

A fact waits (`review = pending`) when its scope reviews before recall — it is then `held`:
no read sees it and it ends nothing until approved — or when it is less confident than the
scope's `review_threshold`, in which case it is active and in recall meanwhile. Approving a
held fact reconciles it then (`memories.services.reconcile.fact_release`); rejecting retracts
it with the reason "rejected in review".
"""

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.audit import audit_record
from accounts.permissions import Access, Principal, require
from memoryweb.errors import Conflict, InvalidInput
from memories.models import Fact, FactStatus, Review, Scope
from memories.services.facts import fact_as_dict, fact_correct, fact_get
from memories.services.indexing import queue_index
from memories.services.reconcile import fact_end, fact_release

REJECTED_REASON = "rejected in review"
# The states a waiting fact can be decided in: a pending fact superseded or retracted meanwhile
# has left the queue (nothing left to approve).
_DECIDABLE = (FactStatus.HELD, FactStatus.ACTIVE)


def review_queue(*, principal: Principal | None, scope: Scope) -> QuerySet[Fact]:
    """The facts waiting for a person, oldest first."""
    require(principal, scope, Access.READ)
    return (
        Fact.objects.in_scope(scope).filter(review=Review.PENDING, status__in=_DECIDABLE)
        .select_related("subject", "object_entity", "source_episode").order_by("created_at", "id")
    )


def fact_approve(*, principal: Principal | None, scope: Scope, fact_public_id) -> Fact:
    """Approve a waiting fact; a held one is reconciled now and reaches recall."""
    require(principal, scope, Access.WRITE)
    with transaction.atomic():
        fact = _waiting(scope, fact_public_id)
        before = fact_as_dict(fact)
        if fact.status == FactStatus.HELD:
            fact_release(scope=scope, fact=fact)
        _decide(principal, scope, fact, Review.APPROVED, action="fact.approve", before=before)
    queue_index(scope)
    return fact


def fact_reject(*, principal: Principal | None, scope: Scope, fact_public_id) -> Fact:
    """Reject a waiting fact: retracted (nothing is deleted), with the reason "rejected in review"."""
    require(principal, scope, Access.WRITE)
    with transaction.atomic():
        fact = _waiting(scope, fact_public_id)
        before = fact_as_dict(fact)
        fact_end(fact, status=FactStatus.RETRACTED, at=timezone.now())
        _decide(principal, scope, fact, Review.REJECTED, action="fact.reject", before=before, reason=REJECTED_REASON)
    return fact


def fact_review_correct(*, principal: Principal | None, scope: Scope, fact_public_id, value: str) -> Fact:
    """Approve a waiting fact and correct its value in one step: the corrected (manual) fact is
    what reaches recall; both or neither happen. Returns the corrected fact."""
    with transaction.atomic():
        approved = fact_approve(principal=principal, scope=scope, fact_public_id=fact_public_id)
        if approved.status != FactStatus.ACTIVE:
            raise Conflict(f"Fact {approved.public_id} became {approved.status} on approval; correct the value active instead.")
        return fact_correct(scope=scope, fact_public_id=approved.public_id, value=value, actor=principal)


def facts_approve(*, principal: Principal | None, scope: Scope, fact_public_ids: list) -> list[Fact]:
    """Approve several waiting facts at once (all or none); ones decided meanwhile are skipped."""
    return _bulk(fact_approve, principal=principal, scope=scope, fact_public_ids=fact_public_ids)


def facts_reject(*, principal: Principal | None, scope: Scope, fact_public_ids: list) -> list[Fact]:
    """Reject several waiting facts at once (all or none); ones decided meanwhile are skipped."""
    return _bulk(fact_reject, principal=principal, scope=scope, fact_public_ids=fact_public_ids)


def _bulk(decide, *, principal: Principal | None, scope: Scope, fact_public_ids: list) -> list[Fact]:
    require(principal, scope, Access.WRITE)
    ids = list(dict.fromkeys(str(i) for i in fact_public_ids or []))
    if not ids:
        raise InvalidInput("Choose at least one fact.")
    decided = []
    with transaction.atomic():
        for fact_id in ids:
            try:
                decided.append(decide(principal=principal, scope=scope, fact_public_id=fact_id))
            except Conflict:
                continue  # someone decided it meanwhile
    return decided


def _waiting(scope: Scope, fact_public_id) -> Fact:
    fact = fact_get(scope=scope, fact_public_id=fact_public_id, lock=True, held=True)
    if fact.review != Review.PENDING or fact.status not in _DECIDABLE:
        raise Conflict(f"Fact {fact.public_id} is not waiting for review (it is {fact.status}, review {fact.review}).")
    return fact


def _decide(principal: Principal | None, scope: Scope, fact: Fact, review: str, *, action: str, before: dict, reason: str = "") -> None:
    fact.review = review
    fact.save(update_fields=["review", "updated_at"])
    after = fact_as_dict(fact)
    if reason:
        after["reason"] = reason
    audit_record(principal=principal, action=action, target_type="fact", target_id=fact.public_id, scope=scope,
                 before=before, after=after)
