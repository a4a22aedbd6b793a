"""Secret files are readable by their owner only from the first byte, and a race leaves one value."""

import multiprocessing
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memoryweb.secrets_file import write_secret_file


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def no_chmod(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a secret file must be created 0600, not chmod'ed afterwards")

    monkeypatch.setattr(os, "chmod", refuse)
    monkeypatch.setattr(os, "fchmod", refuse)
    monkeypatch.setattr(Path, "chmod", refuse)


def test_a_secret_file_is_created_owner_only_whatever_the_umask(tmp_path, no_chmod):
    old = os.umask(0)
    try:
        assert write_secret_file(tmp_path / "home" / "secret_key", "s3cret") == "s3cret"
    finally:
        os.umask(old)
    path = tmp_path / "home" / "secret_key"
    assert path.read_text() == "s3cret" and _mode(path) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["secret_key"]  # no temporary file left


def test_an_existing_secret_file_is_kept(tmp_path):
    path = tmp_path / "secret_key"
    write_secret_file(path, "first")
    assert write_secret_file(path, "second") == "first"
    assert path.read_text() == "first"


def _race(path, value, barrier, results):
    barrier.wait()
    results.put((value, write_secret_file(path, value)))


def test_two_writers_racing_leave_one_value_that_both_return(tmp_path):
    ctx = multiprocessing.get_context("fork")
    for round_ in range(10):
        path = tmp_path / f"secret-{round_}"
        barrier, results = ctx.Barrier(2), ctx.Queue()
        workers = [ctx.Process(target=_race, args=(path, f"value-{n}", barrier, results)) for n in range(2)]
        for w in workers:
            w.start()
        returned = [results.get(timeout=30) for _ in workers]
        for w in workers:
            w.join(timeout=30)
        assert {got for _, got in returned} == {path.read_text()}  # the loser read the winner's value
        assert path.read_text() in {"value-0", "value-1"} and _mode(path) == 0o600
        assert sum(value == got for value, got in returned) == 1  # exactly one process won
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"secret-{n}" for n in range(10)]


def test_settings_generate_the_local_secret_key_owner_only(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    # A DATABASE_URL is only parsed by the settings, so no embedded server starts for this home.
    env.update(MEMORYWEB_HOME=str(tmp_path), DEBUG="true", DATABASE_URL="postgres://u:p@127.0.0.1:1/x")
    code = "from memoryweb import settings; print(settings.SECRET_KEY)"
    keys = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60) for _ in range(2)]
    assert all(k.returncode == 0 for k in keys), keys[0].stderr
    path = tmp_path / "secret_key"
    assert _mode(path) == 0o600
    assert keys[0].stdout.strip() == keys[1].stdout.strip() == path.read_text().strip()  # kept across restarts
