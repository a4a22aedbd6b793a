from accounts.models import Role
from accounts.permissions import team_get
from accounts.services import (
    membership_add, membership_remove, membership_set_role, team_create, team_memberships, user_get,
)
from memoryweb.management.base import MemorywebCommand


class Command(MemorywebCommand):
    help = "Create teams, list yours, and add, re-role or remove members (team admins only; never the last admin)."

    def add_command_arguments(self, parser) -> None:
        sub = self.add_subcommands(parser)
        create = sub.add_parser("create", help="create a team; you become its admin")
        create.add_argument("slug")
        create.add_argument("--name", default="")
        sub.add_parser("list", help="the teams you belong to, with your role")
        for action, text in (("add", "add a member"), ("role", "change a member's role")):
            member = sub.add_parser(action, help=text)
            member.add_argument("username")
            member.add_argument("--team", required=True, help="team slug")
            member.add_argument("--role", required=True, choices=Role.values)
        remove = sub.add_parser("remove", help="remove a member")
        remove.add_argument("username")
        remove.add_argument("--team", required=True, help="team slug")

    def handle(self, *args, **options):
        principal = self.principal(options)
        action = options["action"]
        if action == "create":
            team = team_create(actor=principal, slug=options["slug"], name=options["name"])
            self.emit(options, {"slug": team.slug, "name": team.name, "role": Role.ADMIN},
                      f"Created team {team.slug}; {principal.user.username} is its admin.")
            return
        if action == "list":
            rows = [
                {"slug": m.team.slug, "name": m.team.name, "role": m.role, "personal": m.team.personal_for_id is not None}
                for m in team_memberships(user=principal.user)
            ]
            lines = [f"Teams of {principal.user.username}:"]
            lines += [f"  {r['slug']:<24} {r['role']:<7} {r['name']}" for r in rows] or ["  none"]
            self.emit(options, {"user": principal.user.username, "teams": rows}, "\n".join(lines))
            return
        team = team_get(principal, options["team"])
        user = user_get(username=options["username"])
        if action == "add":
            membership_add(actor=principal, team=team, user=user, role=options["role"])
            text = f"Added {user.username} to team {team.slug} as {options['role']}."
        elif action == "role":
            membership_set_role(actor=principal, team=team, user=user, role=options["role"])
            text = f"{user.username} is now {options['role']} in team {team.slug}."
        else:
            membership_remove(actor=principal, team=team, user=user)
            text = f"Removed {user.username} from team {team.slug}."
        self.emit(options, {"team": team.slug, "user": user.username, "role": options.get("role")}, text)
