"""Reads the team page needs: a team's members, the API tokens that name its scopes, and the
audit trail of its scopes, members and tokens (filtered, newest first)."""

from django.db.models import Q, QuerySet

from accounts.models import ApiToken, AuditEvent, Membership, Team


def team_members(*, team: Team) -> QuerySet[Membership]:
    return Membership.objects.filter(team=team).select_related("user").order_by("user__username")


def team_tokens(*, team: Team) -> QuerySet[ApiToken]:
    """Tokens limited to at least one of the team's scopes, newest first (revoked ones too)."""
    return (
        ApiToken.objects.filter(pk__in=ApiToken.objects.filter(scopes__team=team).values("pk"))
        .select_related("user").prefetch_related("scopes").order_by("-created_at", "-id")
    )


def team_audit(*, team: Team, action: str = "", actor: str = "", scope: str = "") -> QuerySet[AuditEvent]:
    """What happened in the team's scopes, to its membership and to its tokens; `action` exact,
    `actor` a user name or token label (case-insensitive part), `scope` a slug (scoped events only)."""
    token_ids = [str(public_id) for public_id in team_tokens(team=team).values_list("public_id", flat=True)]
    events = AuditEvent.objects.filter(
        Q(scope__team=team) | Q(target_type="team", target_id=str(team.public_id)) | Q(target_type="token", target_id__in=token_ids)
    )
    if action:
        events = events.filter(action=action)
    if actor:
        events = events.filter(actor_label__icontains=actor)
    if scope:
        events = events.filter(scope__team=team, scope__slug=scope)
    return events.select_related("scope").order_by("-created_at", "-id")


def team_audit_actions(*, team: Team) -> list[str]:
    """The actions the team's trail holds, for the filter's choices."""
    return sorted(set(team_audit(team=team).order_by().values_list("action", flat=True).distinct()))
