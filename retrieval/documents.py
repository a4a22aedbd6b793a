"""What text each searchable thing is indexed under.

A turn is indexed with its session date and speaker ("[8 May 2023] Caroline: …"): questions
name people and times far more often than the words of the answer. A turn is also indexed
inside windows of its neighbouring turns in the same session (±1, ±2), because an answer is
often spread over a question and its reply; each window is centred on, and stands for, one
turn. Measured on LOCOMO, both help BM25 and dense vectors alike (see retrieval/eval.py).
"""

from datetime import datetime

from retrieval.models import Collection

WINDOW_RADII: dict[str, int] = {Collection.TURN_W1: 1, Collection.TURN_W2: 2}
TURN_COLLECTIONS = (Collection.TURN, Collection.TURN_W1, Collection.TURN_W2)


def day_label(moment: datetime | None) -> str:
    return f"{moment.day} {moment:%B} {moment.year}" if moment else ""


def said(speaker: str, text: str) -> str:
    return f"{speaker}: {text}" if speaker else text


def turn_document(*, speaker: str, text: str, occurred_at: datetime | None) -> str:
    return f"[{day_label(occurred_at)}] {said(speaker, text)}" if occurred_at else said(speaker, text)


def window_document(*, centre_at: datetime | None, members: list[tuple[str, str]]) -> str:
    body = "\n".join(said(speaker, text) for speaker, text in members)
    return f"[{day_label(centre_at)}] {body}" if centre_at else body


def fact_document(*, sentence: str, subject: str) -> str:
    # The subject's name is added when the sentence does not say it ("I love football" by ankesh),
    # so "what does ankesh like?" finds it.
    if subject and subject.casefold() not in sentence.casefold():
        return f"{subject}: {sentence}"
    return sentence
