"""Who may read, write or administer what. The one place that holds the rules.

A `Principal` is who acts: a user, possibly through one of its API tokens (then limited by it).
Team questions ("is this user an admin of that team") and scope questions ("may this principal
write that scope") are answered here; `memories.scopes` turns them into querysets of scopes.

A scope the principal may not read does not exist for it (404); one it may read but not
change is a 403.
"""

import enum
import time
from dataclasses import dataclass, field

from accounts.models import ApiToken, Membership, Role, Team, User
from memoryweb.errors import Forbidden, NotFound

# A principal acting through a token re-reads the token's row at most this often, so a token
# revoked (or a user deactivated) by another process stops working here within this long.
TOKEN_RECHECK_SECONDS = 1.0


class Access(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


_ROLES_GRANTING = {
    Access.READ: (Role.VIEWER, Role.EDITOR, Role.ADMIN),
    Access.WRITE: (Role.EDITOR, Role.ADMIN),
    Access.ADMIN: (Role.ADMIN,),
}


def roles_granting(access: Access) -> tuple[str, ...]:
    """The membership roles that give `access` to a team's scopes."""
    return tuple(role.value for role in _ROLES_GRANTING[access])


@dataclass(frozen=True)
class Principal:
    """Who is acting. Build a token's principal with `Principal.for_token(token)`."""

    user: User
    token: ApiToken | None = None
    # When the token's row was last read (mutable inside a frozen principal: a cache, not identity).
    _checked_at: list[float] = field(default_factory=lambda: [time.monotonic()], compare=False, repr=False)
    # Rows a door read in the same statement as the token, by key (memories.scopes: a scope by
    # slug, with this user's role and whether the token names it), each taken once by its reader.
    read_ahead: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.token is not None and self.token.user_id != self.user.pk:
            raise ValueError("A token's principal is the token's own user.")

    @classmethod
    def for_token(cls, token: ApiToken) -> "Principal":
        return cls(user=token.user, token=token)

    @property
    def label(self) -> str:
        return f"{self.user.username} via token {self.token.prefix}" if self.token else self.user.username

    @property
    def is_live(self) -> bool:
        """The user is active and the token (if any) neither revoked nor expired, as of at most a second ago."""
        token = self.token
        if token is not None and time.monotonic() - self._checked_at[0] >= TOKEN_RECHECK_SECONDS:
            fresh = (
                ApiToken.objects.filter(pk=token.pk)
                .values("revoked_at", "expires_at", "can_write", "user__is_active")
                .first()
            )
            if fresh is None:  # deleted
                token.revoked_at = token.revoked_at or token.created_at
            else:
                token.revoked_at, token.expires_at, token.can_write = fresh["revoked_at"], fresh["expires_at"], fresh["can_write"]
                self.user.is_active = fresh["user__is_active"]
            self._checked_at[0] = time.monotonic()
        if self.user is None or not self.user.is_active:
            return False
        return token is None or token.is_usable


def token_permits(principal: Principal, access: Access) -> bool:
    """What the principal's token (if any) allows whatever the scope: tokens never administer,
    read-only tokens never write."""
    if not principal.is_live:
        return False
    token = principal.token
    if token is None:
        return True
    return access is Access.READ or (access is Access.WRITE and token.can_write)


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


def teams_for(principal: Principal, access: Access = Access.READ):
    """The teams in whose scopes the principal has `access` (before a token's scope limit)."""
    if not token_permits(principal, access):
        return Team.objects.none()
    return Team.objects.filter(memberships__user=principal.user, memberships__role__in=roles_granting(access)).distinct()


def can(principal: Principal, scope, access: Access) -> bool:
    """May `principal` use `scope` (a memories Scope) for `access`? `permitted`, over the rows it needs."""
    if not token_permits(principal, access):
        return False  # no row needed
    named = principal.token is None or principal.token.scopes.filter(pk=scope.pk).exists()
    role = Membership.objects.filter(user=principal.user, team_id=scope.team_id).values_list("role", flat=True).first() if named else None
    return permitted(principal, access, role=role, token_names_scope=named)


def permitted(principal: Principal, access: Access, *, role: str | None, token_names_scope: bool) -> bool:
    """The rule `can` decides by, over what was read already: the user's role in the scope's
    team (None: not a member) and whether the principal's token names the scope (ignored for a
    user without a token). `memories.scopes.scope_get` reads both in one statement."""
    return (token_permits(principal, access) and (principal.token is None or token_names_scope)
            and role in roles_granting(access))


def require(principal: Principal | None, scope, access: Access) -> None:
    """Refuse unless `principal` may use `scope` for `access`: NotFound when it may not even read
    it (another team's scope does not exist for it), Forbidden when it may read but not this.
    Write services call it themselves, so no door can forget it. None is the system itself
    (an import, a benchmark, the evaluation harness), which no request can be."""
    if principal is None:
        return
    if not can(principal, scope, Access.READ):
        raise NotFound(f"No scope named {scope.slug!r}.")
    if access is not Access.READ and not can(principal, scope, access):
        raise Forbidden(f"You may not {access.value} scope {scope.slug!r}.")
