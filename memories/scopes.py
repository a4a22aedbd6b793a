"""Scopes: which ones a principal may see, getting one by slug, creating, listing and changing them.

The rules (roles, token limits) are `accounts.permissions`; this module turns them into
querysets of scopes, which live here."""

import functools

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from accounts.audit import audit_record
from accounts.models import ApiToken, Membership, Team, User
from accounts.permissions import Access, Principal, is_team_admin, permitted, team_role, teams_for
from accounts.tokens import token_authenticate, token_from_row, token_row_recent, token_sql
from memoryweb.errors import Conflict, Forbidden, InvalidInput, NotFound
from memoryweb.rows import columns, instance
from memories.models import DEFAULT_WEIGHTS, SCOPE_SLUG, Scope


def scopes_for(principal: Principal, access: Access = Access.READ):
    """Every scope `principal` may use for `access`: its teams' scopes, within its token's scopes."""
    scopes = Scope.objects.filter(team__in=teams_for(principal, access))
    if principal.token is not None:
        scopes = scopes.filter(pk__in=principal.token.scopes.values("pk"))
    return scopes


def scope_get(principal: Principal, slug: str, access: Access = Access.READ) -> Scope:
    """The scope named `slug` if `principal` may use it for `access`; NotFound if it may not even read it.

    `can`'s rule (`accounts.permissions.permitted`) over one row: the scope with the user's role
    in its team and whether the token names it, read in one statement written once
    (memoryweb/rows.py; every API request asks this, and the ORM would spend ~1.2 ms of CPU
    building the query), or taken from what the API read with the token (`token_and_scope_read`)."""
    token = principal.token
    read = principal.read_ahead.pop(("scope", slug), None)
    if read is None:
        with connection.cursor() as cursor:
            cursor.execute(_scope_sql(), [principal.user.pk, token.pk if token is not None else None, slug])
            row = cursor.fetchone()
        read = (instance(Scope, row), row[-2], bool(row[-1])) if row is not None else (None, None, False)
    scope, role, named = read
    if scope is not None:
        if permitted(principal, Access.READ, role=role, token_names_scope=named):
            if access is not Access.READ and not permitted(principal, access, role=role, token_names_scope=named):
                raise Forbidden(f"You may not {access.value} scope {slug!r}.")
            return scope
    raise NotFound(f"No scope named {slug!r}.")


def token_and_scope_read(raw: str, slug: str | None) -> Principal | None:
    """The principal of the bearer string `raw` (None for a wrong, revoked or expired one), with
    the scope named `slug` read in the same statement as the token, for `scope_get` to take:
    an API request names its scope in its path, and one round trip to the database is saved.
    The row is one this process read less than a second ago when there is one
    (`accounts.tokens.token_row_recent`)."""
    if not slug:
        token = token_authenticate(raw)
        return Principal.for_token(token) if token is not None else None
    read: dict = {}

    def row_read(prefix: str):
        with connection.cursor() as cursor:
            cursor.execute(_token_scope_sql(), [slug, prefix])
            return cursor.fetchone()

    def lookup(prefix: str) -> ApiToken | None:
        row = token_row_recent((prefix, "scope", slug), lambda: row_read(prefix))
        if row is None:
            return None
        start = len(ApiToken._meta.concrete_fields) + len(User._meta.concrete_fields)
        found = row[start] is not None  # the scope's id: None when no scope has the slug
        read[("scope", slug)] = (instance(Scope, row, start), row[-2], bool(row[-1])) if found else (None, None, False)
        return token_from_row(row)

    token = token_authenticate(raw, lookup=lookup)
    if token is None:
        return None
    principal = Principal.for_token(token)
    principal.read_ahead.update(read)
    return principal


@functools.cache
def _scope_sql() -> str:
    quote = connection.ops.quote_name
    return f"SELECT {_scope_columns(user='%s', token='%s')} FROM {quote(Scope._meta.db_table)} s WHERE s.slug = %s"


@functools.cache
def _token_scope_sql() -> str:
    """`token_sql` with the scope by slug (the first parameter) joined, and the same two answers
    as `_scope_sql` for the token's user and the token."""
    quote = connection.ops.quote_name
    return token_sql(also=f", {_scope_columns(user='u.id', token='t.id')}",
                     joined=f" LEFT JOIN {quote(Scope._meta.db_table)} s ON s.slug = %s")


def _scope_columns(*, user: str, token: str) -> str:
    """The scope `s`'s columns, `user`'s role in its team, and whether `token` names it."""
    quote = connection.ops.quote_name
    membership, named = quote(Membership._meta.db_table), quote(ApiToken.scopes.through._meta.db_table)
    return (f"{columns(Scope, 's')},"
            f" (SELECT m.role FROM {membership} m WHERE m.team_id = s.team_id AND m.user_id = {user}),"
            f" EXISTS (SELECT 1 FROM {named} n WHERE n.scope_id = s.id AND n.apitoken_id = {token})")


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


def validate_review_threshold(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput("The review threshold must be a number from 0 to 1.")
    return float(value)


def validate_review_before_recall(value) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput("Review before recall is true or false.")
    return value


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


def _snapshot(scope: Scope) -> dict:
    return {
        "name": scope.name, "description": scope.description, "team": scope.team.slug,
        "weights": (scope.settings or {}).get("weights", {}),
        "review_threshold": scope.review_threshold, "review_before_recall": scope.review_before_recall,
    }


def scope_update_check(
    *, principal: Principal, scope: Scope, name: str | None = None, description: str | None = None,
    team: Team | None = None, weights: dict | None = None, review_threshold: float | None = None,
    review_before_recall: bool | None = None,
) -> dict:
    """What `scope_update` would change, as {field: new value}, or the domain error it would raise.

    Doors with a form (the admin) call this while validating, so an error shows on the form."""
    if principal.token is not None:
        raise Forbidden("API tokens cannot change scopes.")
    if not is_team_admin(principal.user, scope.team):
        raise Forbidden(f"Only admins of team {scope.team.slug!r} can change its scopes.")
    changes = {}
    if name is not None:
        name = name.strip()
        if not name:
            raise InvalidInput("A scope needs a name.")
        changes["name"] = name
    if description is not None:
        changes["description"] = description
    if team is not None and team.pk != scope.team_id:
        if not is_team_admin(principal.user, team):
            raise Forbidden(f"Only admins of team {team.slug!r} can move a scope into it.")
        changes["team"] = team
    if weights is not None:
        if not isinstance(weights, dict):
            raise InvalidInput('Weights must be an object like {"similarity": 0.65, "importance": 0.3, "recency": 0.05}.')
        changes["weights"] = validate_weights(weights)
    if review_threshold is not None:
        changes["review_threshold"] = validate_review_threshold(review_threshold)
    if review_before_recall is not None:
        changes["review_before_recall"] = validate_review_before_recall(review_before_recall)
    return changes


def scope_update(
    *, principal: Principal, scope: Scope, name: str | None = None, description: str | None = None,
    team: Team | None = None, weights: dict | None = None, review_threshold: float | None = None,
    review_before_recall: bool | None = None,
) -> Scope:
    """Change a scope's name, description, team, ranking weights or review settings (None:
    unchanged; `weights` replaces the stored ones, {} restores the defaults). Review settings
    apply to facts extracted from then on: facts held already wait for their review. The principal must administer the
    scope's team, and the new team when moving it. Audited with before and after."""
    with transaction.atomic():
        # Lock and re-read: `scope` may be stale, or already changed in memory by a form.
        scope = Scope.objects.select_for_update().select_related("team").get(pk=scope.pk)
        changes = scope_update_check(
            principal=principal, scope=scope, name=name, description=description, team=team, weights=weights,
            review_threshold=review_threshold, review_before_recall=review_before_recall,
        )
        before = _snapshot(scope)
        for field in ("name", "description", "team"):
            if field in changes:
                setattr(scope, field, changes[field])
        if "weights" in changes:
            scope.settings = {**(scope.settings or {}), "weights": changes["weights"]}
            if not changes["weights"]:
                del scope.settings["weights"]
        for setting in ("review_threshold", "review_before_recall"):
            if setting in changes:
                scope.settings = {**(scope.settings or {}), setting: changes[setting]}
        after = _snapshot(scope)
        if after == before:
            return scope
        scope.save(update_fields=["name", "description", "team", "settings"])
        changed = [field for field in before if before[field] != after[field]]
        audit_record(
            principal=principal, action="scope.update", target_type="scope", target_id=scope.public_id, scope=scope,
            before={f: before[f] for f in changed}, after={f: after[f] for f in changed},
        )
    return scope
