"""Progress on a terminal for long CLI operations: a tqdm bar on stderr (count, rate, time left),
quiet with --json or when stderr is not a terminal (a pipe, a log, a test)."""

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(*, label: str, quiet: bool = False, unit: str = "rows") -> Iterator[Callable[..., None] | None]:
    """Yields a `progress(done, total, stage=None)` callback for a service, or None when quiet.
    A new `stage` ("ingest", "questions" …) starts the count, rate and time left afresh under
    `label: stage`."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    bar = tqdm(desc=label, unit=unit, unit_scale=True, file=sys.stderr, **_shape())
    current = [None]

    def progress(done: int, total: int, stage: str | None = None) -> None:
        if stage is not None and stage != current[0]:
            current[0] = stage
            bar.reset(total=total)
            bar.set_description(f"{label}: {stage}", refresh=False)
        bar.total = total
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        bar.close()


def _shape() -> dict:
    """Follow the terminal's width; a terminal that reports no size (a pseudo-terminal nobody sized,
    as some runners make) would get no bar at all from tqdm, so it gets $COLUMNS/$LINES or 80×24."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        size = os.terminal_size((0, 0))
    if size.columns and size.lines:
        return {"dynamic_ncols": True}
    fallback = shutil.get_terminal_size()
    return {"ncols": fallback.columns, "nrows": fallback.lines}


def no_progress(done: int, total: int, stage: str | None = None) -> None:
    """The callback for a service called without one (a test, the API)."""
