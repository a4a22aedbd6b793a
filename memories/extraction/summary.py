"""What a consolidation summary is: the prompt and reply schema for a language model, and the
extractive summary written without one (memories/services/consolidate.py decides which).

A summary condenses a batch of old, unimportant episodes of one subject and one month. The model
is asked to keep names, places, dates and numbers and to add nothing; offline, the summary is the
originals' own first sentences, in order, with duplicates dropped, so every word in it was said.
"""

import functools
import json
import re
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from memoryweb.providers.llm import schema_for_prompt

# Longest summary kept: a model running on is cut off by the schema (and re-asked), the
# extractive summary stops at a whole entry.
MAX_SUMMARY_CHARS = 2000
# Longest original shown to the model: 50 of these fit an 8k-token context.
_MAX_ORIGINAL_CHARS = 600
_MAX_SENTENCE_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Original:
    """One episode to condense, as the summary sees it."""

    text: str
    occurred_at: datetime


class Summary(BaseModel):
    """The model's reply."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)


SUMMARY_SYSTEM = """You condense old, minor memories of a memory store that a team shares.
You get the messages one person said during one month, oldest first, each with its date.
Write one short third-person paragraph that keeps what they said worth finding later: names of
people, places, organizations and things, dates, numbers, and what happened. Use the person's
name, never "I" or "the user". Add nothing that the messages do not say; leave out greetings and
small talk that carry no information.
Reply with ONE JSON object and nothing else, matching this JSON schema:
{schema}"""


@functools.cache
def summary_system() -> str:
    return SUMMARY_SYSTEM.replace("{schema}", json.dumps(schema_for_prompt(Summary)))


def summary_prompt(*, subject: str, period: str, originals: list[Original]) -> str:
    lines = [f"Person: {subject}", f"Month: {period}", "Messages:"]
    for original in originals:
        lines.append(f"- [{original.occurred_at:%Y-%m-%d}] {_shortened(original.text, _MAX_ORIGINAL_CHARS)}")
    return "\n".join(lines)


def summary_check(reply: Summary) -> str | None:
    """What the schema cannot say: a summary has words in it."""
    return None if re.search(r"\w", reply.summary) else "the summary is empty"


def extractive_summary(originals: list[Original]) -> str:
    """The first sentence of each original, dated, oldest first, each said once ("2 Mar: …; 5 Mar:
    …"), cut at a whole entry before MAX_SUMMARY_CHARS with how many were left out."""
    entries: list[str] = []
    seen: set[str] = set()
    for original in originals:
        sentence = _shortened(_SENTENCE_END.split(original.text.strip(), maxsplit=1)[0], _MAX_SENTENCE_CHARS)
        key = " ".join(sentence.casefold().split())
        if not key or key in seen:
            continue
        seen.add(key)
        entries.append(f"{original.occurred_at.day} {original.occurred_at:%b}: {sentence}")
    kept: list[str] = []
    length = 0
    for index, entry in enumerate(entries):
        if length + len(entry) > MAX_SUMMARY_CHARS - 20:  # room left for "; (+N more)"
            kept.append(f"(+{len(entries) - index} more)")
            break
        kept.append(entry)
        length += len(entry) + 2
    return "; ".join(kept)


def _shortened(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
    return cut + "…"
