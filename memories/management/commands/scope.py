from accounts.models import Team
from memoryweb.errors import NotFound
from memoryweb.management.base import MemorywebCommand
from memories.models import Scope
from memories.scopes import scope_create, scope_list


class Command(MemorywebCommand):
    help = "Create and list scopes (shared memory spaces)."

    def add_command_arguments(self, parser) -> None:
        sub = self.add_subcommands(parser)
        create = sub.add_parser("create", help="create a scope")
        create.add_argument("slug")
        create.add_argument("--team", help="team slug (default: your personal team)")
        create.add_argument("--name", default="")
        create.add_argument("--description", default="")
        sub.add_parser("list", help="list the scopes you can read")

    def handle(self, *args, **options):
        principal = self.principal(options)
        if options["action"] == "create":
            team = None
            if options["team"]:
                team = Team.objects.filter(slug=options["team"]).first()
                if team is None:
                    raise NotFound(f"No team named {options['team']!r}.")
            scope = scope_create(
                principal=principal, slug=options["slug"], team=team, name=options["name"], description=options["description"]
            )
            self.emit(options, _scope_dict(scope), f"Created scope {scope.slug} in team {scope.team.slug}.")
            return
        visible = scope_list(principal=principal)
        scopes = list(visible)
        # A local operator tool: saying how many scopes sit in other teams tells a shell user
        # nothing the database would not, and explains an empty list.
        elsewhere = Scope.objects.exclude(pk__in=visible.values("pk")).count()
        who = principal.user.username
        lines = [f"Scopes visible to {who}:" + ("" if scopes else " none.")]
        lines += [f"  {s.slug:<24} {s.team.slug:<20} {s.name}" for s in scopes]
        if elsewhere:
            lines.append(
                f"{elsewhere} {'more ' if scopes else ''}scope{'s' if elsewhere != 1 else ''} "
                f"exist{'s' if elsewhere == 1 else ''} in teams {who} is not in; act as another user with --as USER."
            )
        elif not scopes:
            lines.append("Create one with: memoryweb scope create SLUG")
        self.emit(options, {"user": who, "scopes": [_scope_dict(s) for s in scopes], "not_visible": elsewhere}, "\n".join(lines))


def _scope_dict(scope) -> dict:
    return {"id": str(scope.public_id), "slug": scope.slug, "name": scope.name, "team": scope.team.slug}
