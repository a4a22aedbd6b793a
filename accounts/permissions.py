"""Which scopes may this user or token read, write or administer. Every door asks here.

A scope the principal may not read does not exist for it (404); one it may read but not
change is a 403.
"""

import enum
from dataclasses import dataclass

from accounts.models import ApiToken, Membership, Role, Team, User
from memoryweb.errors import Forbidden, NotFound


class Access(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


_ROLES_GRANTING = {
    Access.READ: [Role.VIEWER, Role.EDITOR, Role.ADMIN],
    Access.WRITE: [Role.EDITOR, Role.ADMIN],
    Access.ADMIN: [Role.ADMIN],
}


@dataclass(frozen=True)
class Principal:
    """Who is acting: a user, possibly through one of its API tokens (then limited by it)."""

    user: User
    token: ApiToken | None = None

    @property
    def label(self) -> str:
        return f"{self.user.username} via token {self.token.prefix}" if self.token else self.user.username


def team_role(user: User | None, team: Team) -> str | None:
    """The user's role in `team`, or None when they are not a member (an inactive user has none)."""
    if user is None or not user.is_active:
        return None
    return Membership.objects.filter(user=user, team=team).values_list("role", flat=True).first()


def is_team_admin(user: User | None, team: Team) -> bool:
    """The one answer to "may this user manage that team's members, tokens and scopes"."""
    return team_role(user, team) == Role.ADMIN


def team_get(principal: Principal, slug: str) -> Team:
    """The team named `slug` if `principal`'s user belongs to it; NotFound otherwise (other teams do not exist for it)."""
    team = Team.objects.filter(slug=slug).first()
    if team is None or team_role(principal.user, team) is None:
        raise NotFound(f"No team named {slug!r}.")
    return team


def scopes_for(principal: Principal, access: Access = Access.READ):
    from memories.models import Scope

    if principal.user is None or not principal.user.is_active:
        return Scope.objects.none()
    token = principal.token
    if token is not None:
        if not token.is_usable or access is Access.ADMIN or (access is Access.WRITE and not token.can_write):
            return Scope.objects.none()
    scopes = Scope.objects.filter(
        team__memberships__user=principal.user, team__memberships__role__in=_ROLES_GRANTING[access]
    )
    if token is not None:
        scopes = scopes.filter(pk__in=token.scopes.values("pk"))
    return scopes.distinct()


def can(principal: Principal, scope, access: Access) -> bool:
    return scopes_for(principal, access).filter(pk=scope.pk).exists()


def scope_get(principal: Principal, slug: str, access: Access = Access.READ):
    """The scope named `slug` if `principal` may use it for `access`; NotFound if it may not even read it."""
    scope = scopes_for(principal, Access.READ).filter(slug=slug).first()
    if scope is None:
        raise NotFound(f"No scope named {slug!r}.")
    if access is not Access.READ and not can(principal, scope, access):
        raise Forbidden(f"You may not {access.value} scope {slug!r}.")
    return scope
