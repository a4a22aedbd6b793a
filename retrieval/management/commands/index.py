"""`memoryweb index --scope S`: bring a scope's search index up to date now, with progress.

The large build's door (after `memoryweb ingest` of a big file, with indexing left to it): the
full sweep of the index task (`index_pending(full=True)`), in this process, a bar on a terminal.
It commits batch by batch, so an interrupted run (Ctrl-C, a crash) keeps what it wrote and the
next run goes on from there; a large scope's graphs are built once at the end."""

import time

from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import progress_bar
from memories.scopes import scope_get
from retrieval.indexing import index_pending


class Command(MemorywebCommand):
    help = "Index what a scope's search index lacks now (resumable; progress on a terminal)."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("--scope", required=True, help="scope slug")

    def handle(self, *args, **options):
        scope = scope_get(self.principal(options), options["scope"], Access.WRITE)
        started = time.perf_counter()
        with progress_bar(label=f"index {scope.slug}", quiet=options["json"], unit="turns") as progress:
            documents = index_pending(scope=scope, full=True, progress=progress)
        seconds = round(time.perf_counter() - started, 1)
        self.emit(options, {"scope": scope.slug, "documents": documents, "seconds": seconds},
                  f"Indexed {scope.slug}: {documents} documents written in {seconds} s.")
