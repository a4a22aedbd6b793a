from accounts.models import Team
from memoryweb.errors import NotFound
from memoryweb.management.base import MemorywebCommand
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
        scopes = list(scope_list(principal=principal))
        lines = [f"{s.slug:<24} {s.team.slug:<20} {s.name}" for s in scopes] or ["(no scopes yet: memoryweb scope create SLUG)"]
        self.emit(options, {"scopes": [_scope_dict(s) for s in scopes]}, "\n".join(lines))


def _scope_dict(scope) -> dict:
    return {"id": str(scope.public_id), "slug": scope.slug, "name": scope.name, "team": scope.team.slug}
