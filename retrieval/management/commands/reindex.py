from django.conf import settings
from django.core.management.base import CommandError

from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memoryweb.providers.embedders import configured_embedder_name
from memoryweb.progress import progress_bar
from memories.scopes import scope_get, scopes_for
from retrieval.reindex import reindex_embedder, scope_reindex, vectors_drop_old


class Command(MemorywebCommand):
    help = ("Fill a scope's vectors for another embedding model beside the old ones, in batches (resumable), and switch "
            "recall to it when complete; --drop-old then removes the old model's vectors.")

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", help="only this scope (default: every scope you may write)")
        parser.add_argument("--model", required=True, help="the embedder: local, hash, ollama, openai (or kind:model, e.g. ollama:nomic-embed-text)")
        parser.add_argument("--drop-old", action="store_true", help="afterwards, delete the vectors of every other model")
        parser.add_argument("--batch-size", type=int, help=f"vectors per committed batch (default MEMORYWEB_REINDEX_BATCH, {settings.MEMORYWEB_REINDEX_BATCH})")

    def handle(self, *args, **options):
        principal = self.principal(options)
        if options["batch_size"] is not None and options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        embedder = reindex_embedder(options["model"])  # an unknown name stops here, before any scope is touched
        if options["scope"]:
            scopes = [scope_get(principal, options["scope"], Access.WRITE)]
        else:
            scopes = list(scopes_for(principal, Access.WRITE).order_by("slug"))
        reports, lines = [], []
        for scope in scopes:
            with progress_bar(label=f"reindex {scope.slug}", quiet=options["json"], unit="vectors") as progress:
                report = scope_reindex(principal=principal, scope=scope, model=options["model"], batch_size=options["batch_size"],
                                       progress=progress)
            if options["drop_old"]:
                report.dropped = vectors_drop_old(principal=principal, scope=scope, model=options["model"])
            reports.append(report.as_dict())
            lines.append(_line(report))
        note = ""
        if embedder.name != configured_embedder_name():
            note = (f"Note: EMBEDDER is {settings.EMBEDDER} ({configured_embedder_name()}), so new scopes and entity resolution"
                    f" still use it; set EMBEDDER (and EMBEDDING_MODEL) to match {embedder.name}.")
        text = "\n".join(lines) if lines else "No scope to reindex."
        self.emit(options, {"model": embedder.name, "scopes": reports, "note": note}, text + ("\n" + note if note else ""))


def _line(report) -> str:
    if report.from_model == report.model and not report.embedded:
        head = f"{report.scope}: on {report.model} already"
    else:
        head = (f"{report.scope}: {report.from_model or 'no index'} → {report.model}, {report.embedded} vectors in"
                f" {report.seconds:.1f} s ({report.rate} vectors/s), switched")
    if report.dropped is not None:
        head += f"; {report.dropped} old vectors dropped"
    return head + "."
