"""Users and teams."""

import secrets

from django.conf import settings
from django.db import transaction
from django.utils.text import slugify

from accounts.models import Membership, Role, Team, User
from memoryweb.errors import Conflict, InvalidInput, NotFound


def _free_team_slug(base: str) -> str:
    base = slugify(base)[:50] or "team"
    slug, n = base, 1
    while Team.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def personal_team_ensure(*, user: User) -> Team:
    """Every user has a personal team in which they are admin. Idempotent."""
    team = Team.objects.filter(personal_for=user).first()
    if team is None:
        team = Team.objects.create(slug=_free_team_slug(user.username), name=f"{user.username} (personal)", personal_for=user)
    Membership.objects.get_or_create(user=user, team=team, defaults={"role": Role.ADMIN})
    return team


def user_create(*, username: str, password: str | None, is_admin: bool = False, email: str = "") -> User:
    username = (username or "").strip()
    if not username:
        raise InvalidInput("A username is required.")
    if User.objects.filter(username__iexact=username).exists():
        raise Conflict(f"A user named {username!r} exists already.")
    with transaction.atomic():
        user = User(username=username, email=email, is_staff=is_admin, is_superuser=is_admin)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
        personal_team_ensure(user=user)
    return user


def team_create(*, slug: str, name: str = "", owner: User) -> Team:
    slug = slugify(slug)
    if not slug:
        raise InvalidInput("A team needs a slug of letters, digits, '-' or '_'.")
    if Team.objects.filter(slug=slug).exists():
        raise Conflict(f"A team named {slug!r} exists already.")
    with transaction.atomic():
        team = Team.objects.create(slug=slug, name=name or slug)
        Membership.objects.create(user=owner, team=team, role=Role.ADMIN)
    return team


def membership_set(*, team: Team, user: User, role: str) -> Membership:
    if role not in Role.values:
        raise InvalidInput(f"Role must be one of {', '.join(Role.values)}.")
    membership, _ = Membership.objects.update_or_create(user=user, team=team, defaults={"role": role})
    return membership


def local_admin_ensure() -> tuple[User, str | None]:
    """The first admin, created on a fresh install with a generated password.

    Returns the admin and, only when it was just created, its password (also written to
    MEMORYWEB_HOME/admin-password so it can be read again).
    """
    admin = User.objects.filter(is_superuser=True, is_active=True).order_by("pk").first()
    if admin is not None:
        return admin, None
    password = secrets.token_urlsafe(12)
    admin = user_create(username="admin", password=password, is_admin=True)
    home = settings.MEMORYWEB_HOME
    home.mkdir(parents=True, exist_ok=True)
    path = home / "admin-password"
    path.write_text(password + "\n")
    path.chmod(0o600)
    return admin, password


def cli_user(username: str | None = None) -> User:
    """The named local user the CLI acts as: --as, else MEMORYWEB_CLI_USER, else the first admin."""
    username = username or settings.MEMORYWEB_CLI_USER
    if username:
        user = User.objects.filter(username=username, is_active=True).first()
        if user is None:
            raise NotFound(f"No active user named {username!r}.")
        return user
    return local_admin_ensure()[0]
