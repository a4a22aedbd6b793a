"""Comparison keys for names and values: how "Google", " google " and "GOOGLE." become one."""

import re

_SPACE = re.compile(r"\s+")
# Punctuation that frames a value without changing it: quotes, brackets, trailing full stops.
_EDGE_PUNCTUATION = " \t\n\"'`“”‘’()[]{}.,;:!?"
_LEADING_ARTICLE = re.compile(r"^(?:a|an|the)\s+")


def normalize_name(text: str) -> str:
    """Casefolded, whitespace collapsed, framing punctuation removed: the alias key."""
    return _SPACE.sub(" ", (text or "").casefold()).strip(_EDGE_PUNCTUATION)[:200]


def normalize_value(text: str) -> str:
    """The name key without a leading article, so "a software engineer" equals "software engineer"."""
    return _LEADING_ARTICLE.sub("", normalize_name(text))[:300]


def words(text: str) -> list[str]:
    return normalize_name(text).split(" ") if normalize_name(text) else []
