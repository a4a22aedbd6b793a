from accounts.permissions import Access
from memoryweb.cli_memory import store_output
from memoryweb.client import Episode
from memoryweb.management.memory import MemoryCommand
from memories.scopes import scope_get
from memories.services.extract import episode_get
from memories.services.facts import episode_as_dict, fact_list_for_episode
from memories.services.ingest import remember


class Command(MemoryCommand):
    help = "Store one memory in a scope. Without a broker, extraction runs at once and its facts are printed."
    name = "store"

    def local_output(self, options):
        principal = self.principal(options)
        scope = scope_get(principal, options["scope"], Access.WRITE)
        result = remember(
            scope=scope, text=options["text"], speaker=options["speaker"], occurred_at=options["occurred_at"], actor=principal,
            source="cli",
        )
        episode = episode_get(scope=scope, episode_public_id=result.episodes[0].episode_id)
        facts = list(fact_list_for_episode(scope=scope, episode=episode))
        was = {str(f.public_id): f.supersedes.value for f in facts if f.supersedes_id}
        return store_output(Episode.from_dict(episode_as_dict(episode, facts=facts)), scope.slug, was)
