"""Scopes: which ones a principal may see, getting one by slug, creating and listing them.

The rules (roles, token limits) are `accounts.permissions`; this module turns them into
querysets of scopes, which live here."""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from accounts.models import Team
from accounts.permissions import Access, Principal, can, is_team_admin, team_role, teams_for
from memoryweb.errors import Conflict, Forbidden, InvalidInput, NotFound
from memories.models import DEFAULT_WEIGHTS, SCOPE_SLUG, Scope


def scopes_for(principal: Principal, access: Access = Access.READ):
    """Every scope `principal` may use for `access`: its teams' scopes, within its token's scopes."""
    scopes = Scope.objects.filter(team__in=teams_for(principal, access))
    if principal.token is not None:
        scopes = scopes.filter(pk__in=principal.token.scopes.values("pk"))
    return scopes


def scope_get(principal: Principal, slug: str, access: Access = Access.READ) -> Scope:
    """The scope named `slug` if `principal` may use it for `access`; NotFound if it may not even read it."""
    scope = scopes_for(principal, Access.READ).filter(slug=slug).first()
    if scope is None:
        raise NotFound(f"No scope named {slug!r}.")
    if access is not Access.READ and not can(principal, scope, access):
        raise Forbidden(f"You may not {access.value} scope {slug!r}.")
    return scope


def validate_weights(weights: dict) -> dict[str, float]:
    unknown = set(weights) - set(DEFAULT_WEIGHTS)
    if unknown:
        raise InvalidInput(f"Unknown weight(s): {', '.join(sorted(unknown))}; use {', '.join(DEFAULT_WEIGHTS)}.")
    clean = {}
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise InvalidInput(f"Weight {name!r} must be a number from 0 to 1.")
        clean[name] = float(value)
    return clean


def scope_create(
    *, principal: Principal, slug: str, team: Team | None = None, name: str = "", description: str = "", weights: dict | None = None
) -> Scope:
    """Create a scope in `team` (default: the user's personal team); the user must administer that team."""
    from accounts.services import personal_team_ensure

    slug = (slug or "").strip()
    try:
        SCOPE_SLUG(slug)
    except ValidationError:
        raise InvalidInput(f"Invalid scope slug {slug!r}: use 1-63 lowercase letters, digits, '-' or '_'.") from None
    if principal.token is not None:
        raise Forbidden("API tokens cannot create scopes.")
    if team is None:
        team = personal_team_ensure(user=principal.user)
    elif not is_team_admin(principal.user, team):
        if team_role(principal.user, team) is None:
            raise NotFound(f"No team named {team.slug!r}.")
        raise Forbidden(f"Only admins of team {team.slug!r} can create scopes in it.")
    settings = {"weights": validate_weights(weights)} if weights else {}
    try:
        with transaction.atomic():
            return Scope.objects.create(team=team, slug=slug, name=name or slug, description=description, settings=settings)
    except IntegrityError:
        raise Conflict(f"A scope named {slug!r} exists already.") from None


def scope_list(*, principal: Principal):
    return scopes_for(principal, Access.READ).select_related("team").order_by("slug")
