"""Reads the pages need beyond the services: a scope's numbers, its recent episodes, an
episode's neighbouring turns, an entity's mentions, merges and audit trail. Every read is scoped."""

import uuid

from django.db.models import Count, IntegerField, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from accounts.models import AuditEvent
from memories.models import Entity, EntityMerge, Episode, EpisodeStatus, Fact, FactStatus, Mention, Scope, Turn

# Episodes still being worked on: the pages poll while one of these is on screen.
UNFINISHED = (EpisodeStatus.PENDING, EpisodeStatus.PROCESSING)


def _count(queryset: QuerySet) -> Coalesce:
    """A correlated COUNT(*) over `queryset` (already filtered on scope=OuterRef("pk")), 0 when empty."""
    counted = queryset.order_by().values("scope").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def scopes_with_counts(scopes: QuerySet[Scope]) -> QuerySet[Scope]:
    """`scopes` annotated with n_episodes, n_entities (canonical ones), n_active_facts,
    n_failed and last_activity (the latest episode stored), in one query: each number is a
    correlated subquery, so a page of scopes is never N+1 and joins never multiply the counts."""
    episodes = Episode.objects.filter(scope=OuterRef("pk"))
    return scopes.annotate(
        n_episodes=_count(episodes),
        n_entities=_count(Entity.objects.filter(scope=OuterRef("pk"), merged_into__isnull=True)),
        n_active_facts=_count(Fact.objects.filter(scope=OuterRef("pk"), status=FactStatus.ACTIVE)),
        n_failed=_count(episodes.filter(status=EpisodeStatus.FAILED)),
        last_activity=Subquery(
            episodes.order_by().values("scope").annotate(last=Max("ingested_at")).values("last")
        ),
    )


def episodes_recent(*, scope: Scope, limit: int = 20) -> list[Episode]:
    """The latest stored episodes, newest first."""
    return list(Episode.objects.in_scope(scope).order_by("-ingested_at", "-id")[:limit])


def turns_around(*, scope: Scope, episode: Episode, around: int = 3) -> list[Turn]:
    """The episode's turn and up to `around` turns either side of it in its session."""
    if episode.turn_id is None:
        return []
    turn = Turn.objects.in_scope(scope).get(pk=episode.turn_id)
    return list(
        Turn.objects.in_scope(scope)
        .filter(session_id=turn.session_id, position__gte=turn.position - around, position__lte=turn.position + around)
        .annotate(episode_public_id=Subquery(Episode.objects.filter(turn=OuterRef("pk")).values("public_id")[:1]))
        .order_by("position")
    )


def entity_mentions(*, scope: Scope, entity: Entity, limit: int = 50) -> list[Episode]:
    """The episodes that mention `entity` (or an entity merged into it), newest first, each with
    its roles as `mention_roles`."""
    mentions = Mention.objects.in_scope(scope).filter(Q(entity=entity) | Q(entity__merged_into=entity))
    episodes = list(
        Episode.objects.in_scope(scope).filter(pk__in=mentions.values("episode_id")).order_by("-occurred_at", "-id")[:limit]
    )
    roles: dict[int, set[str]] = {}
    for episode_id, role in mentions.filter(episode__in=episodes).values_list("episode_id", "role"):
        roles.setdefault(episode_id, set()).add(role)
    for episode in episodes:
        episode.mention_roles = sorted(roles.get(episode.pk, ()))
    return episodes


def entity_stored(*, scope: Scope, public_id: str) -> Entity | None:
    """The entity with this public id as stored, a merged one too (services resolve a merged
    entity to what it was merged into; its own page and a merge need the row itself). None when
    `public_id` is not a UUID or names no entity of the scope."""
    try:
        wanted = uuid.UUID(str(public_id).strip())
    except ValueError:
        return None
    return Entity.objects.in_scope(scope).select_related("merged_into").filter(public_id=wanted).first()


def merges_standing(*, scope: Scope, entity: Entity) -> list[EntityMerge]:
    """The merges not undone of `entity` (as source) or into it (as target), newest first: what
    its page offers to undo."""
    return list(
        EntityMerge.objects.in_scope(scope).filter(Q(source=entity) | Q(target=entity), undone_at__isnull=True)
        .select_related("source", "target").order_by("-at", "-id")
    )


def audit_for_entity(*, scope: Scope, entity: Entity, limit: int = 20) -> list[AuditEvent]:
    """The latest audit events about the entity's facts (as subject), the entity itself and the
    entities merged into it (merges and their undos), newest first. A merge's event carries its
    `EntityMerge` as `merge`, for the names."""
    fact_ids = [str(public_id) for public_id in Fact.objects.in_scope(scope).filter(subject=entity).values_list("public_id", flat=True)]
    merges = {
        str(merge.public_id): merge
        for merge in EntityMerge.objects.in_scope(scope).filter(Q(source=entity) | Q(target=entity)).select_related("source", "target")
    }
    entity_ids = {str(entity.public_id)} | {str(merge.source.public_id) for merge in merges.values()}
    events = list(
        AuditEvent.objects.filter(scope=scope)
        .filter(Q(target_type="fact", target_id__in=fact_ids) | Q(target_type="entity", target_id__in=entity_ids))
        .order_by("-created_at", "-id")[:limit]
    )
    for event in events:
        sides = [side for side in (event.after, event.before) if isinstance(side, dict)]
        event.merge = next((merges[side["merge"]] for side in sides if side.get("merge") in merges), None)
    return events


def episodes_failed(*, scope: Scope, limit: int = 50) -> list[Episode]:
    """Episodes whose extraction failed, newest first, for the review page (they wait for a retry)."""
    return list(Episode.objects.in_scope(scope).filter(status=EpisodeStatus.FAILED).order_by("-ingested_at", "-id")[:limit])


def has_unfinished(episodes) -> bool:
    return any(episode.status in UNFINISHED for episode in episodes)
