"""Small slices of the LOCOMO dev file for tests: some sessions of some conversations, with the
questions whose evidence lies wholly inside them. The shared data sit beside the repository
(never copied into it); MEMORYWEB_LOCOMO_DEV points elsewhere."""

import json
import os
from pathlib import Path

import pytest

_SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo"
DEV = Path(os.environ.get("MEMORYWEB_LOCOMO_DEV") or _SHARED / "locomo-dev.json")
# Three more conversations (conv-41, conv-42, conv-43), for the five-conversation cross-validation.
TUNE = Path(os.environ.get("MEMORYWEB_LOCOMO_TUNE") or _SHARED / "locomo-tune.json")


def dev_samples(path: Path = DEV) -> list[dict]:
    """The dev file's conversations (or another shared file's); skipped without the file, failed
    in CI (shared/ should sit beside the repository there)."""
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"no LOCOMO file at {path} in CI (shared/ should sit beside the repository)")
        pytest.skip(f"no LOCOMO file at {path}")
    return json.loads(path.read_text())


def sessions_slice(*, sample_ids: tuple[str, ...] | None, sessions: tuple[str, ...], files: tuple[Path, ...] = (DEV,)) -> list[dict]:
    """The conversations named (all when None) of `files` cut to `sessions` ("1", "2", …), each
    with the questions answered wholly by those sessions' turns, in the files' order."""
    out = []
    for sample in (s for path in files for s in dev_samples(path)):
        if sample_ids is not None and sample["sample_id"] not in sample_ids:
            continue
        conv = {k: v for k, v in sample["conversation"].items() if not k.startswith("session_") or k.split("_")[1] in sessions}
        turns = {t["dia_id"] for n in sessions for t in conv[f"session_{n}"]}
        qa = [q for q in sample["qa"] if q.get("evidence") and all(e in turns for e in q["evidence"])]
        out.append({"sample_id": sample["sample_id"], "conversation": conv, "qa": qa})
    return out


def slice_file(tmp_path: Path, samples: list[dict], name: str = "slice.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(samples))
    return path
