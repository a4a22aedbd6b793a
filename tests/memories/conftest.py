"""Helpers for the memory core tests: run on_commit work (extraction) as a real commit would,
and a scripted language model for failure paths."""

from datetime import UTC, datetime

import pytest

from memories.extraction.schemas import Extraction


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """`with committed(): remember(...)`: the test transaction never commits, so run the
    on_commit callbacks (the queued extraction, eager) when the block ends, as a commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


class ScriptedLLM:
    """Stands in for the extractor in force (memories.extraction.extractors.extractor_get()) in
    failure-path unit tests.

    `script` is a list of what successive extract() calls do: an Extraction (or dict) to return,
    or an exception to raise. `decisions` is the same for decide()."""

    is_offline = True

    def __init__(self, script=None, decisions=None, name="scripted"):
        self.name = name
        self.script = list(script or [])
        self.decisions = list(decisions or [])
        self.extract_calls = []
        self.decide_calls = []

    def extract(self, *, text, speaker, occurred_at, team=None, people=()):
        self.extract_calls.append({"text": text, "speaker": speaker, "occurred_at": occurred_at})
        step = self.script.pop(0) if self.script else Extraction()
        if isinstance(step, Exception):
            raise step
        return step

    def decide(self, *, fact, candidates):
        self.decide_calls.append({"fact": fact, "candidates": candidates})
        step = self.decisions.pop(0)
        if isinstance(step, Exception):
            raise step
        return step(candidates) if callable(step) else step


@pytest.fixture
def scripted_llm(monkeypatch):
    """Install a ScriptedLLM as the extractor in force (extractor_get) and return it."""
    llm = ScriptedLLM()
    monkeypatch.setattr("memories.extraction.extractors.extractor_get", lambda: llm)
    return llm


def at(year: int, month: int, day: int = 1) -> datetime:
    return datetime(year, month, day, 12, 0, tzinfo=UTC)
