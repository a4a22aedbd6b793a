from accounts.permissions import Access
from memoryweb.errors import InvalidInput
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import progress_bar
from memories.scopes import scope_get, scopes_for
from memories.services.dedup import dedup_apply, dedup_propose, dedup_undo, merge_scope_find
from memories.services.merge import merge_as_dict
from retrieval.services import merge_documents_refresh


class Command(MemorywebCommand):
    help = (
        "Find duplicate entities of a scope and merge them (with --dry-run, only list them). Three passes "
        "propose pairs of one kind: exact normalised names, containment and trigram similarity, name-vector "
        "cosine: `dedup [--scope S] [--dry-run] [--min-score X]`; undo one merge exactly: `dedup undo MERGE_ID`."
    )

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("undo", nargs="*", metavar="undo MERGE_ID", help="undo the merge MERGE_ID")
        parser.add_argument("--scope", help="scope slug (default: every scope you may use)")
        parser.add_argument("--dry-run", action="store_true", help="list the proposals and change nothing")
        parser.add_argument("--min-score", type=float, default=0.0, metavar="X",
                            help="only proposals scoring at least X (0 to 1; 1: exact normalised names only)")

    def handle(self, *args, **options):
        principal = self.principal(options)
        words = options["undo"]
        if words:
            if len(words) != 2 or words[0] != "undo":
                raise InvalidInput("Use `dedup [--scope S] [--dry-run]` or `dedup undo MERGE_ID [--scope S]`.")
            self._undo(principal, options, words[1])
            return
        min_score = options["min_score"]
        if not 0 <= min_score <= 1:
            raise InvalidInput(f"--min-score must be from 0 to 1, not {min_score:g}.")
        access = Access.READ if options["dry_run"] else Access.WRITE
        if options["scope"]:
            scopes = [scope_get(principal, options["scope"], access)]
        else:
            scopes = list(scopes_for(principal, access).order_by("slug"))
        quiet = options["json"]
        report, lines = [], []
        with progress_bar(label="dedup scopes", quiet=quiet or len(scopes) < 2, unit="scopes") as scanned:
            found = []
            for done, scope in enumerate(scopes, 1):
                proposals = dedup_propose(principal=principal, scope=scope)
                found.append((scope, [p for p in proposals if p.score >= min_score]))
                if scanned:
                    scanned(done, len(scopes))
        for scope, proposals in found:
            entry = {"scope": scope.slug, "proposals": [p.as_dict() for p in proposals], "merges": []}
            lines.append(f"{scope.slug}: {len(proposals)} proposal{'s' if len(proposals) != 1 else ''}")
            lines += [f"  {_proposal_line(p.as_dict())}" for p in proposals]
            if not options["dry_run"] and proposals:
                with progress_bar(label=f"merging in {scope.slug}", quiet=quiet, unit="merges") as progress:
                    applied = dedup_apply(principal=principal, scope=scope, proposals=proposals, progress=progress)
                for result in applied:
                    if result.merge is not None:
                        merge_documents_refresh(result.merge)
                        lines.append(f"  merged {result.merge.source.name} into {result.merge.target.name} "
                                     f"(undo: memoryweb dedup undo {result.merge.public_id})")
                    else:
                        lines.append(f"  not merged: {result.skipped}")
                entry["merges"] = [result.as_dict() for result in applied]
            report.append(entry)
        if options["dry_run"]:
            lines.append("Dry run: nothing changed.")
        self.emit(options, {"dry_run": options["dry_run"], "scopes": report}, "\n".join(lines))

    def _undo(self, principal, options, merge_id: str) -> None:
        if options["scope"]:
            scope = scope_get(principal, options["scope"], Access.WRITE)
        else:
            scope = merge_scope_find(scopes=scopes_for(principal, Access.READ), merge_id=merge_id)
        merge = dedup_undo(principal=principal, scope=scope, merge_id=merge_id)
        merge_documents_refresh(merge)
        self.emit(options, merge_as_dict(merge), f"Undid merge {merge.public_id}: {merge.source.name} is its own entity again.")


def _proposal_line(data: dict) -> str:
    evidence = data["evidence"]
    why = {
        "exact": lambda: f"both normalise to {evidence['key']!r}",
        "containment": lambda: f"{evidence['names'][0]!r} / {evidence['names'][1]!r} contain one another, similarity {evidence['similarity']}",
        "trigram": lambda: f"{evidence['names'][0]!r} / {evidence['names'][1]!r} trigram similarity {evidence['similarity']}",
        "embedding": lambda: f"name vectors cosine {evidence['cosine']}",
    }[data["pass"]]()
    return f"{data['pass']:<11} {data['score']:.2f}  {data['source']['name']} → {data['target']['name']} ({data['entity_kind']}): {why}"
