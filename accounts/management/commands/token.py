import re
from datetime import timedelta

from django.utils import timezone
from django.utils.dateparse import parse_datetime, parse_date

from accounts.models import ApiToken
from accounts.permissions import Access
from accounts.services import user_get
from accounts.tokens import token_issue, token_revoke
from memoryweb.errors import InvalidInput, NotFound
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get


class Command(MemorywebCommand):
    help = "Issue, list and revoke API tokens for the local user."

    def add_command_arguments(self, parser) -> None:
        sub = self.add_subcommands(parser)
        create = sub.add_parser("create", help="issue a token; its secret is printed once")
        create.add_argument("name")
        create.add_argument("--scope", action="append", required=True, dest="scopes", help="a scope slug (repeatable)")
        create.add_argument("--write", action="store_true", help="read+write (default: read only)")
        create.add_argument("--expires", help="ISO date or date-time, or a lifetime: 12h, 30d, 8w")
        create.add_argument("--user", default=None, help="issue it for this member of a team you administer (default: you)")
        sub.add_parser("list", help="list your tokens")
        revoke = sub.add_parser("revoke", help="revoke a token by its prefix")
        revoke.add_argument("prefix")

    def handle(self, *args, **options):
        principal = self.principal(options)
        action = options["action"]
        if action == "create":
            # token_issue decides what the actor may grant; here a slug only has to name a visible scope.
            scopes = [scope_get(principal, slug, Access.READ) for slug in options["scopes"]]
            expires_at = _parse_expiry(options["expires"]) if options["expires"] else None
            user = user_get(username=options["user"]) if options["user"] else principal.user
            issued = token_issue(
                user=user, name=options["name"], scopes=scopes, can_write=options["write"], expires_at=expires_at,
                actor=principal,
            )
            self.emit(
                options,
                {"token": issued.secret, "prefix": issued.token.prefix, "name": issued.token.name, "user": user.username,
                 "scopes": [s.slug for s in scopes], "can_write": options["write"], "expires_at": expires_at.isoformat() if expires_at else None},
                f"{issued.secret}\nKeep it now: this secret is not shown again.",
            )
        elif action == "list":
            tokens = list(ApiToken.objects.filter(user=principal.user).prefetch_related("scopes"))
            rows = [_token_dict(t) for t in tokens]
            lines = [
                f"{r['prefix']:<14} {r['name']:<20} {'rw' if r['can_write'] else 'r':<3} {','.join(r['scopes']):<30} {r['state']}"
                for r in rows
            ] or ["(no tokens)"]
            self.emit(options, {"tokens": rows}, "\n".join(lines))
        else:
            token = ApiToken.objects.filter(user=principal.user, prefix=options["prefix"].removeprefix("mw_").split("_")[0]).first()
            if token is None:
                raise NotFound(f"No token of yours with prefix {options['prefix']!r}.")
            token_revoke(token=token, actor=principal)
            self.emit(options, _token_dict(token), f"Revoked token {token.prefix}.")


_LIFETIME = re.compile(r"([1-9][0-9]*)([hdw])")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


def _parse_expiry(raw: str):
    lifetime = _LIFETIME.fullmatch(raw.strip())
    if lifetime:
        return timezone.now() + timedelta(**{_UNITS[lifetime[2]]: int(lifetime[1])})
    value = parse_datetime(raw)
    if value is None:
        day = parse_date(raw)
        if day is None:
            raise InvalidInput(f"--expires must be an ISO date or date-time, or a lifetime like 30d (h, d, w), not {raw!r}.")
        value = timezone.datetime(day.year, day.month, day.day)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, timezone.get_default_timezone())
    return value


def _token_dict(token: ApiToken) -> dict:
    state = "revoked" if token.revoked_at else ("expired" if not token.is_usable else "active")
    return {
        "prefix": token.prefix, "name": token.name, "can_write": token.can_write, "scopes": [s.slug for s in token.scopes.all()],
        "expires_at": token.expires_at, "last_used_at": token.last_used_at, "state": state,
    }
