"""Helpers for the tests of the local embedding model: texts to embed, the network switched off
while a graph is exported, and work run in a forked child (an embedder must still work after a
fork: a prefork worker's child)."""

import os
import socket
import threading
from contextlib import contextmanager
from unittest import mock

import pytest

CONVERSATION = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: That's great! What did you talk about there?",
    "Caroline: The transgender stories were so inspiring, I felt accepted for who I am.",
    "Melanie: I painted a lake sunrise last year, it's one of my favourite pieces.",
    "Caroline: I'm thinking about a career in counseling and mental health.",
    "Melanie: My kids loved the camping trip to the beach in June.",
    "Caroline: I moved from Sweden four years ago, my grandma gave me a necklace before I left.",
    "Melanie: We signed up for a pottery class on Saturday, I made a black and white bowl.",
    "Caroline: Adoption agencies have been so helpful, I want to build a family.",
    "Melanie: I run to de-stress, and reading keeps me calm in the evenings.",
    "hi",
    "ok 👍",
    "What did Caroline research? " + "A long sentence that goes on and on about many things. " * 40,  # past 256 tokens: truncated
]


@contextmanager
def network_off():
    """Every internet socket connection fails and is recorded; the Unix sockets of the embedded
    PostgreSQL still work. HF_HUB_OFFLINE is set as the product sets it."""
    attempts: list = []
    connect = socket.socket.connect

    def guarded(sock, address):
        if sock.family != socket.AF_UNIX:
            attempts.append(address)
            raise OSError(f"the network is off in this test ({address})")
        return connect(sock, address)

    with mock.patch.object(socket.socket, "connect", guarded), mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
        yield attempts



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
