from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from memories.services.extract import episode_get
from memories.services.facts import episode_as_dict, fact_as_dict, fact_list_for_episode
from memories.services.ingest import remember


class Command(MemorywebCommand):
    help = "Store one memory in a scope. Without a broker, extraction runs at once and its facts are printed."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("text", help="what was said or should be remembered")
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument("--speaker", default="", help="who said it; 'I' in the text means this person (default: you)")
        parser.add_argument("--at", dest="occurred_at", default=None, metavar="ISO-DATE", help="when it happened (default: now)")

    def handle(self, *args, **options):
        principal = self.principal(options)
        scope = scope_get(principal, options["scope"], Access.WRITE)
        result = remember(
            scope=scope, text=options["text"], speaker=options["speaker"], occurred_at=options["occurred_at"], actor=principal,
            source="cli",
        )
        episode = episode_get(scope=scope, episode_public_id=result.episodes[0].episode_id)
        facts = list(fact_list_for_episode(scope=scope, episode=episode))
        data = {"episode": episode_as_dict(episode), "facts": [fact_as_dict(f) for f in facts]}
        lines = [f"Stored episode {episode.public_id} ({episode.status})."]
        if episode.status == "failed":
            lines.append(f"Extraction failed: {episode.error}")
            lines.append(f"Retry with: memoryweb retry {episode.public_id} --scope {scope.slug}")
        for fact in facts:
            note = f" (was: {fact.supersedes.value})" if fact.supersedes_id else ""
            state = "" if fact.status == "active" else f" [{fact.status}]"
            lines.append(f"  {fact.subject.name} · {fact.attribute} · {fact.value}{note}{state}")
        if episode.status == "done" and not facts:
            lines.append("  (no new facts)")
        self.emit(options, data, "\n".join(lines))
