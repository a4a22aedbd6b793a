import getpass
import sys

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from accounts.services import user_create
from memoryweb.management.base import MemorywebCommand


class Command(MemorywebCommand):
    help = "Create users. The password is prompted for, or read from standard input with --password-stdin."
    acts_as_user = False

    def add_command_arguments(self, parser) -> None:
        sub = self.add_subcommands(parser)
        create = sub.add_parser("create", help="create a user (with a personal team)")
        create.add_argument("username")
        create.add_argument("--admin", action="store_true", help="a site admin (Django admin access)")
        create.add_argument("--email", default="")
        create.add_argument("--password-stdin", action="store_true", help="read the password from standard input")

    def handle(self, *args, **options):
        if options["password_stdin"]:
            password = sys.stdin.readline().rstrip("\n")
        else:
            password = getpass.getpass("Password: ")
            if password != getpass.getpass("Password (again): "):
                raise CommandError("The passwords do not match.")
        try:
            validate_password(password)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        user = user_create(username=options["username"], password=password, is_admin=options["admin"], email=options["email"])
        team = user.personal_team
        self.emit(
            options,
            {"username": user.username, "admin": user.is_superuser, "team": team.slug},
            f"Created user {user.username}{' (admin)' if user.is_superuser else ''} with personal team {team.slug}.",
        )
