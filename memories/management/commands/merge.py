from accounts.permissions import Access
from memoryweb.errors import InvalidInput
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from memories.services.facts import entity_get
from memories.services.merge import entity_merge, entity_merge_preview, entity_merge_undo, merge_as_dict
from retrieval.services import merge_documents_refresh


class Command(MemorywebCommand):
    help = (
        "Merge one entity into another (facts, mentions and aliases move; the source is kept, merged), "
        "or undo a merge: `merge SOURCE TARGET --scope S [--dry-run]`, `merge undo MERGE_ID --scope S`."
    )

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("names", nargs=2, metavar="SOURCE TARGET",
                            help="the entities (names or ids), or `undo MERGE_ID`")
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument("--dry-run", action="store_true", help="show what would move and change nothing")

    def handle(self, *args, **options):
        principal = self.principal(options)
        first, second = options["names"]
        if first == "undo":
            scope = scope_get(principal, options["scope"], Access.WRITE)
            merge = entity_merge_undo(principal=principal, scope=scope, merge_id=second)
            merge_documents_refresh(merge)
            self.emit(options, merge_as_dict(merge), f"Undid merge {merge.public_id}: {merge.source.name} is its own entity again.")
            return
        scope = scope_get(principal, options["scope"], Access.READ if options["dry_run"] else Access.WRITE)
        source = entity_get(scope=scope, name_or_id=first)
        target = entity_get(scope=scope, name_or_id=second)
        if source.pk == target.pk:
            raise InvalidInput(f"{first!r} and {second!r} are one entity already ({target.name}).")
        if options["dry_run"]:
            preview = entity_merge_preview(principal=principal, scope=scope, source=source, target=target)
            self.emit(options, preview.as_dict(), _preview_text(preview.as_dict()))
            return
        merge = entity_merge(principal=principal, scope=scope, source=source, target=target)
        merge_documents_refresh(merge)
        data = merge_as_dict(merge)
        moved = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in data["moved"].items())
        self.emit(options, data, f"Merged {source.name} into {target.name} (merge {merge.public_id}): {moved}.\n"
                                 f"Undo with: memoryweb merge undo {merge.public_id} --scope {scope.slug}")


def _preview_text(data: dict) -> str:
    lines = [
        f"Would merge {data['source']['name']} into {data['target']['name']} (nothing changed):",
        f"  facts about it: {len(data['facts_as_subject'])}, facts pointing at it: {len(data['facts_as_object'])}",
        f"  mentions: {data['mentions']} (+{data['mentions_dropped']} the target has already)",
        f"  aliases: {', '.join(data['aliases']) or 'none'}",
    ]
    lines += [f"  collision: {c['attribute']} = {c['value']}: the target's fact stays, the duplicate is superseded"
              for c in data["collisions"]]
    lines += [f"  both stay active: {c['attribute']} = {c['source_value']} / {c['target_value']} (correct one afterwards)"
              for c in data["conflicts"]]
    return "\n".join(lines)
