import uuid

from django.core.management.base import CommandError

from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from retrieval.services import episode_forget


class Command(MemorywebCommand):
    help = "Forget an episode: erase it, its turn and what only it said, from the memory and the search index."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("episode_id", metavar="EPISODE_ID", help="the episode's id (a UUID, as store and recall print it)")
        parser.add_argument("--scope", required=True, help="scope slug")

    def handle(self, *args, **options):
        try:
            episode_id = uuid.UUID(options["episode_id"].strip())
        except ValueError:
            raise CommandError(f"{options['episode_id']!r} is not an episode id: give the UUID that store or recall printed.") from None
        principal = self.principal(options)
        # Reading is enough to find the scope; the service decides whether this principal may forget.
        scope = scope_get(principal, options["scope"], Access.READ)
        receipt = episode_forget(principal=principal, scope=scope, episode_public_id=episode_id)
        counts = ", ".join(f"{kind} {n}" for kind, n in receipt.counts.items() if n)
        self.emit(options, receipt.as_dict(), f"Forgot episode {receipt.episode_id} in {receipt.scope}: {counts}.")
