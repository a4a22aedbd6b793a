"""Users, teams and memberships.

Creating a user (with its personal team), a team, or the first-run admin is all-or-nothing and
safe when two processes do it at once: unique constraints decide, and the loser's
IntegrityError becomes a Conflict (or, for the first admin, an advisory lock makes the second
process wait and find the first one's admin).
"""

import secrets
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils.text import slugify

from accounts.audit import audit_record
from accounts.models import Membership, Role, Team, User
from accounts.permissions import Principal, is_team_admin, team_role
from memoryweb.errors import Conflict, Forbidden, InvalidInput, NotFound
from memoryweb.secrets_file import write_secret_file


def _team_insert(*, base: str, **fields) -> Team:
    """A new team under the first free slug `base`, `base-2`, … Another process may take a slug
    between our look-up and our insert, so the insert itself decides (in a savepoint) and we move on."""
    base = slugify(base)[:50] or "team"
    slug, n = base, 1
    while True:
        if not Team.objects.filter(slug=slug).exists():
            try:
                with transaction.atomic():
                    return Team.objects.create(slug=slug, **fields)
            except IntegrityError:
                if not Team.objects.filter(slug=slug).exists():
                    raise  # not the slug: let the caller see the real violation
        n += 1
        slug = f"{base}-{n}"


def personal_team_ensure(*, user: User) -> Team:
    """Every user has a personal team in which they are admin. Idempotent."""
    with transaction.atomic():
        team = Team.objects.filter(personal_for=user).first()
        if team is None:
            team = _team_insert(base=user.username, name=f"{user.username} (personal)", personal_for=user)
        Membership.objects.get_or_create(user=user, team=team, defaults={"role": Role.ADMIN})
    return team


def user_create(*, username: str, password: str | None, is_admin: bool = False, email: str = "") -> User:
    """A user and their personal team, both or neither."""
    username = (username or "").strip()
    if not username:
        raise InvalidInput("A username is required.")
    conflict = Conflict(f"A user named {username!r} exists already.")
    if User.objects.filter(username__iexact=username).exists():
        raise conflict
    try:
        with transaction.atomic():
            user = User(username=username, email=email, is_staff=is_admin, is_superuser=is_admin)
            if password:
                user.set_password(password)
            else:
                user.set_unusable_password()
            user.save()  # the post_save signal ensures the personal team, inside this transaction
            personal_team_ensure(user=user)
    except IntegrityError:
        # Another process created the same name (in any case) between our check and our insert.
        raise conflict from None
    return user


def team_create(*, actor: Principal | None, slug: str, name: str = "", owner: User | None = None) -> Team:
    """A team whose first admin is `owner` (default: the actor's user). `actor` None is the
    system (fixtures); a person acting is audited."""
    if actor is not None and actor.token is not None:
        raise Forbidden("API tokens cannot create teams.")
    owner = owner or (actor.user if actor is not None else None)
    if owner is None:
        raise InvalidInput("A team needs an owner.")
    clean = slugify(slug or "")
    if not clean or clean != slug or len(clean) > 64:
        hint = f" (like {clean!r})" if clean and len(clean) <= 64 else ""
        raise InvalidInput(f"Invalid team slug {slug!r}: use 1-64 lowercase letters, digits, '-' or '_'{hint}.")
    conflict = Conflict(f"A team named {clean!r} exists already.")
    if Team.objects.filter(slug=clean).exists():
        raise conflict
    try:
        with transaction.atomic():
            team = Team.objects.create(slug=clean, name=name or clean)
            Membership.objects.create(user=owner, team=team, role=Role.ADMIN)
            _audit(actor, "team.create", team, after={"slug": team.slug, "name": team.name, "admin": owner.username})
    except IntegrityError:
        raise conflict from None  # another process took the slug between our check and our insert
    return team


def team_memberships(*, user: User):
    """The teams `user` belongs to, as memberships (with the team), personal team first."""
    personal_first = F("team__personal_for").asc(nulls_last=True)
    return Membership.objects.filter(user=user).select_related("team").order_by(personal_first, "team__slug")


def membership_set(*, team: Team, user: User, role: str) -> Membership:
    """Unchecked and unaudited: for fixtures and system use. People go through membership_add / _set_role / _remove."""
    _role_valid(role)
    membership, _ = Membership.objects.update_or_create(user=user, team=team, defaults={"role": role})
    return membership


def membership_add(*, actor: Principal, team: Team, user: User, role: str) -> Membership:
    _role_valid(role)
    with transaction.atomic():
        memberships = _locked_memberships(actor=actor, team=team)
        existing = next((m for m in memberships if m.user_id == user.pk), None)
        if existing is not None:
            raise Conflict(f"{user.username} is a member of team {team.slug!r} already (as {existing.role}).")
        try:
            with transaction.atomic():
                membership = Membership.objects.create(team=team, user=user, role=role)
        except IntegrityError:
            raise Conflict(f"{user.username} is a member of team {team.slug!r} already.") from None
        _audit(actor, "team.member_add", team, after={"user": user.username, "role": role})
    return membership


def membership_set_role(*, actor: Principal, team: Team, user: User, role: str) -> Membership:
    _role_valid(role)
    with transaction.atomic():
        memberships = _locked_memberships(actor=actor, team=team)
        membership = _member(memberships, team=team, user=user)
        before = membership.role
        if before == Role.ADMIN and role != Role.ADMIN:
            _not_the_last_admin(memberships, membership, verb="demote")
        if before != role:
            membership.role = role
            membership.save(update_fields=["role"])
            _audit(actor, "team.member_role", team, before={"user": user.username, "role": before},
                   after={"user": user.username, "role": role})
    return membership


def membership_remove(*, actor: Principal, team: Team, user: User) -> None:
    with transaction.atomic():
        memberships = _locked_memberships(actor=actor, team=team)
        membership = _member(memberships, team=team, user=user)
        if membership.role == Role.ADMIN:
            _not_the_last_admin(memberships, membership, verb="remove")
        membership.delete()
        _audit(actor, "team.member_remove", team, before={"user": user.username, "role": membership.role})


def _role_valid(role: str) -> None:
    if role not in Role.values:
        raise InvalidInput(f"Role must be one of {', '.join(Role.values)}.")


def _locked_memberships(*, actor: Principal, team: Team) -> list[Membership]:
    """Lock the team's membership rows, then check the actor administers it. Two admins removing
    each other at once are serialised here, so the second sees the first's change and the team
    never loses its last admin; checking after the lock means an actor demoted a moment ago is refused."""
    if actor.token is not None:
        raise Forbidden("API tokens cannot manage team members.")
    memberships = list(Membership.objects.select_for_update(of=("self",)).filter(team=team).select_related("user").order_by("pk"))
    if not is_team_admin(actor.user, team):
        if team_role(actor.user, team) is None:
            raise NotFound(f"No team named {team.slug!r}.")
        raise Forbidden(f"Only admins of team {team.slug!r} can manage its members.")
    return memberships


def _member(memberships: list[Membership], *, team: Team, user: User) -> Membership:
    for membership in memberships:
        if membership.user_id == user.pk:
            return membership
    raise NotFound(f"{user.username} is not a member of team {team.slug!r}.")


def _not_the_last_admin(memberships: list[Membership], membership: Membership, *, verb: str) -> None:
    if not any(m.role == Role.ADMIN and m.pk != membership.pk for m in memberships):
        raise Conflict(
            f"Cannot {verb} {membership.user.username}: they are the last admin of team {membership.team.slug!r}; "
            "make another member admin first."
        )


def _audit(actor: Principal | None, action: str, team: Team, *, before: dict | None = None, after: dict | None = None) -> None:
    if actor is None:
        return
    audit_record(principal=actor, action=action, target_type="team", target_id=team.public_id, before=before, after=after)


# Any fixed key: every process asking for it queues on the same PostgreSQL lock.
_FIRST_ADMIN_LOCK = "memoryweb:first-admin"


def local_admin_ensure() -> tuple[User, str | None]:
    """The first admin, created on a fresh install with a generated password.

    Returns the admin and, only to the process that just created it, its password (also written
    to MEMORYWEB_HOME/admin-password so it can be read again). Two processes starting at once
    queue on an advisory lock: the second finds the first one's admin and gets no password.
    """
    admin = _first_admin()
    if admin is not None:
        return admin, None
    path = admin_password_file()
    written = False
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [_FIRST_ADMIN_LOCK])
            admin = _first_admin()
            if admin is not None:
                return admin, None
            password = secrets.token_urlsafe(12)
            admin = user_create(username="admin", password=password, is_admin=True)
            # Written before the commit: if the file cannot be written, no admin exists without it.
            # We hold the lock and no admin exists, so a file already there is left from an earlier install.
            path.unlink(missing_ok=True)
            write_secret_file(path, password + "\n")
            written = True
    except BaseException:
        if written:
            path.unlink(missing_ok=True)  # the commit failed: no file for an admin that does not exist
        raise
    return admin, password


def admin_password_file() -> Path:
    """Where the first admin's generated password is kept: MEMORYWEB_ADMIN_PASSWORD_FILE, else
    MEMORYWEB_HOME/admin-password. The test suite points its servers' copy elsewhere, so that a
    `serve` it starts on the test database cannot overwrite the file of the install it runs beside."""
    override = settings.MEMORYWEB_ADMIN_PASSWORD_FILE
    return Path(override).expanduser() if override else settings.MEMORYWEB_HOME / "admin-password"


def _first_admin() -> User | None:
    return User.objects.filter(is_superuser=True, is_active=True).order_by("pk").first()


def cli_user(username: str | None = None) -> User:
    """The named local user the CLI acts as: --as, else MEMORYWEB_CLI_USER, else the first admin."""
    username = username or settings.MEMORYWEB_CLI_USER
    if username:
        return user_get(username=username)
    return local_admin_ensure()[0]


def user_get(*, username: str) -> User:
    user = User.objects.filter(username=username, is_active=True).first()
    if user is None:
        raise NotFound(f"No active user named {username!r}.")
    return user
