"""Progress on a terminal for long CLI operations: a tqdm bar on stderr, quiet with --json or when
stderr is not a terminal (a pipe, a log, a test)."""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(*, label: str, quiet: bool = False, unit: str = "rows") -> Iterator[Callable[[int, int], None] | None]:
    """Yields a `progress(done, total)` callback for a service, or None when quiet."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    bar = tqdm(desc=label, unit=unit, unit_scale=True, file=sys.stderr, dynamic_ncols=True)

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        bar.close()
