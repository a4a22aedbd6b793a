"""What text each searchable thing is indexed under.

A turn is indexed with its session date and speaker ("[8 May 2023] Caroline: …"): questions
name people and times far more often than the words of the answer. A turn is also indexed
inside windows of its neighbouring turns in the same session (±1, ±2), because an answer is
often spread over a question and its reply; each window is centred on, and stands for, one
turn. Measured on LOCOMO, both help BM25 (see retrieval/eval.py).

A turn's (or a free-standing episode's) vector is made from what was said, without the date
label and the speaker's name (RETRIEVAL_TURN_VECTOR_TEXT=said, `vector_text`): the label is the
same few words on every turn of a day, which pulls all the vectors one way and blurs what they
say, and who and when are the lexical side's to match (BM25 over the document, the speaker
boost, the time window). The question's vector leaves the speakers' names out to match
(retrieval/search/question.py: `dense_query`). Measured on the LOCOMO dev pair and chosen by
cross-validation (retrieval/cv.py, docs/ARCHITECTURE.md).
"""

import re
from datetime import datetime

from django.conf import settings

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


_DAY_LABEL = re.compile(r"^\[[^\]\n]*\] ")


def vector_text(*, collection: str, text: str, speaker: str) -> str:
    """The text a document's vector is made from: with RETRIEVAL_TURN_VECTOR_TEXT=said, a turn's or
    a free-standing episode's document without its date label and its speaker's "name: ";
    otherwise, and for facts and windows, the document itself (a window's vector is composed
    from its turns', RETRIEVAL_WINDOW_VECTORS; embedded from its text only when one of them has
    none, or with RETRIEVAL_WINDOW_VECTORS=text)."""
    if settings.RETRIEVAL_TURN_VECTOR_TEXT != "said" or collection not in (Collection.TURN, Collection.EPISODE):
        return text
    words = _DAY_LABEL.sub("", text, count=1)
    if speaker and words.startswith(f"{speaker}: "):
        words = words[len(speaker) + 2:]
    return words or text
