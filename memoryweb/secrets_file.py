"""Files holding secrets (the generated SECRET_KEY, the first admin's password)."""

import os
import tempfile
from pathlib import Path


def write_secret_file(path: Path, text: str) -> str:
    """Create `path` holding `text`, readable by its owner only, and return what it holds.

    The text goes into a temporary file that mkstemp creates with mode 0600 (so the secret is
    never readable by others, not even for a moment, whatever the umask), which is then
    hard-linked to `path`: the link either creates `path` complete or fails because it exists.
    So when two processes race, the loser reads the winner's whole file, never a half-written
    one, and an existing file (an earlier run's) is kept and its contents returned.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return path.read_text()
        return text
    finally:
        os.unlink(tmp)
