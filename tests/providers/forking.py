"""Run a piece of work in a forked child and read back what it printed, failing the test if the
child hangs: an embedder must still work after a fork (a prefork worker's child)."""

import os
import threading

import pytest


def in_forked_child(work, *, timeout: float = 60.0) -> str:
    """`work()` (returning a short string: a pipe holds 64 KiB until the parent reads) run in a
    forked child; its result, once the child has exited. A child still running after `timeout`
    seconds is killed and the test fails."""
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(writing, work().encode())
        finally:
            os._exit(0)
    os.close(writing)
    for _ in range(int(timeout * 10)):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        threading.Event().wait(0.1)
    else:
        os.kill(pid, 9)
        pytest.fail("the forked child hung on embedding")
    with os.fdopen(reading) as pipe:
        return pipe.read()
