from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from memories.services.extract import episode_retry


class Command(MemorywebCommand):
    help = "Queue a failed episode for extraction again."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("episode_id", help="the episode's id, as `store` printed it")
        parser.add_argument("--scope", required=True, help="scope slug")

    def handle(self, *args, **options):
        principal = self.principal(options)
        scope = scope_get(principal, options["scope"], Access.WRITE)
        episode = episode_retry(scope=scope, episode_public_id=options["episode_id"], actor=principal)
        text = f"Episode {episode.public_id} is {episode.status}."
        if episode.error and episode.status == "failed":
            text += f"\n{episode.error}"
        self.emit(options, {"id": str(episode.public_id), "status": episode.status, "error": episode.error,
                            "attempts": episode.attempts}, text)
