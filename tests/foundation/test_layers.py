"""The layers import downwards only (pyproject.toml's import-linter contracts), checked in the suite."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )


def test_the_import_contracts_are_kept():
    result = _lint("--no-cache")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


def test_a_wrong_import_breaks_a_contract(tmp_path):
    # The contracts can fail: a lower layer importing a higher one is reported.
    config = tmp_path / "contracts.toml"
    config.write_text(
        (ROOT / "pyproject.toml").read_text()
        + '\n[[tool.importlinter.contracts]]\nname = "canary"\ntype = "forbidden"\n'
        'source_modules = ["retrieval.indexing"]\nforbidden_modules = ["memories"]\n'
    )
    result = _lint("--no-cache", "--config", str(config))
    assert result.returncode != 0 and "canary BROKEN" in result.stdout
