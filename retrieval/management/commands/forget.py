from django.core.management.base import CommandError

from accounts.permissions import Access
from memoryweb.cli_memory import episode_id_arg, forget_output
from memoryweb.client import ForgetReceipt
from memoryweb.management.memory import MemoryCommand
from memories.scopes import scope_get
from retrieval.services import episode_forget


class Command(MemoryCommand):
    help = "Forget an episode: erase it, its turn and what only it said, from the memory and the search index."
    name = "forget"

    def local_output(self, options):
        try:
            episode_id = episode_id_arg(options["episode_id"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        principal = self.principal(options)
        # Reading is enough to find the scope; the service decides whether this principal may forget.
        scope = scope_get(principal, options["scope"], Access.READ)
        receipt = episode_forget(principal=principal, scope=scope, episode_public_id=episode_id)
        return forget_output(ForgetReceipt.from_dict(receipt.as_dict()))
