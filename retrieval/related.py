"""Related words (RETRIEVAL_RELATED_WORDS): the words of a scope's conversation that mean what a
question's words mean, by the embedder's vectors of single words ("kids" → "children", "sport" →
"tennis"), added to the question's lexemes for one more BM25 list of turns. A question names a kind
("What sports …?"), its evidence an instance ("… my tennis lesson"); BM25 cannot see that, and the
sentence vector of a long turn says too many other things to rank it.

The vocabulary is the scope's turns' words (PostgreSQL's `simple` parser: every word as written,
lower-cased), each embedded once and kept in this process per (scope, model, number of turns), so it
is made again when the conversation grows. For scopes searched exactly only (the caller checks):
a scope of 100,000 turns would hold tens of thousands of words to embed.
"""

import numpy as np
from django.db import connection

from memoryweb.providers.embedders import Embedder
from memories.models import Scope, Turn
from retrieval.fulltext import QUESTION_WORDS
from retrieval.intents import words

RELATED_PER_WORD = 3  # at most this many related words for one word of the question
RELATED_MAX = 8  # and this many for the whole question
_MIN_LENGTH = 3

# (scope, model, turns) -> (words, their lexemes, their unit vectors as rows)
_vocabularies: dict[tuple[int, str, int], tuple[list[str], list[str], np.ndarray]] = {}


def _lexemes(texts: list[str]) -> list[str]:
    """Each word's lexeme in PostgreSQL's `english` normal form ("" for a stop word)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(array_to_string(tsvector_to_array(to_tsvector('english', w)), ' '), '')"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS u(w, n) ORDER BY n",
            [texts],
        )
        return [row[0] for row in cursor.fetchall()]


def _unit(vectors: list[list[float]]) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def scope_vocabulary(scope: Scope, embedder: Embedder) -> tuple[list[str], list[str], np.ndarray]:
    """The scope's turns' distinct words (letters only, at least three, not stop words), their
    lexemes, and their vectors; made once per (scope, model, number of turns) in this process."""
    turns = Turn.objects.in_scope(scope).count()
    key = (scope.pk, embedder.name, turns)
    if key not in _vocabularies:
        with connection.cursor() as cursor:
            # ts_stat takes its query as text: the scope's key is a whole number, written in.
            cursor.execute(
                "SELECT word FROM ts_stat(%s) WHERE word ~ '^[a-z]+$' AND length(word) >= %s ORDER BY word",
                [f"SELECT to_tsvector('simple', text) FROM memories_turn WHERE scope_id = {int(scope.pk)}", _MIN_LENGTH],
            )
            found = [row[0] for row in cursor.fetchall()]
        lexemes = _lexemes(found)
        kept = [(word, lexeme) for word, lexeme in zip(found, lexemes) if lexeme and " " not in lexeme]
        vocabulary = [word for word, _ in kept]
        matrix = _unit(embedder.embed(vocabulary)) if vocabulary else np.zeros((0, int(embedder.dim)), np.float32)
        for stale in [k for k in _vocabularies if k[:2] == key[:2]]:
            del _vocabularies[stale]
        _vocabularies[key] = (vocabulary, [lexeme for _, lexeme in kept], matrix)
    return _vocabularies[key]


def related_lexemes(
    *, scope: Scope, text: str, lexemes: list[str], speakers: tuple[str, ...], embedder: Embedder, threshold: float,
) -> list[str]:
    """The lexemes of the scope's words whose cosine with one of the question's words is at least
    `threshold`, best first: at most RELATED_PER_WORD for a word and RELATED_MAX in all, never one
    of the question's own lexemes. The question's words are those that are neither a question word,
    a stop word nor a speaker's name."""
    names = {part.casefold() for speaker in speakers for part in speaker.split()}
    asked = list(dict.fromkeys(
        w.lower() for w in words(text) if w.isalpha() and len(w) >= _MIN_LENGTH and w.lower() not in QUESTION_WORDS and w.casefold() not in names
    ))
    asked = [word for word, lexeme in zip(asked, _lexemes(asked)) if lexeme] if asked else []
    if not asked:
        return []
    vocabulary, vocabulary_lexemes, matrix = scope_vocabulary(scope, embedder)
    if not vocabulary:
        return []
    own = set(lexemes)
    similarity = _unit(embedder.embed(asked)) @ matrix.T
    found: dict[str, float] = {}
    for row in similarity:
        taken = 0
        for at in np.argsort(-row, kind="stable"):
            if row[at] < threshold or taken >= RELATED_PER_WORD:
                break
            lexeme = vocabulary_lexemes[at]
            if lexeme in own or vocabulary[at] in names:
                continue
            if lexeme not in found:
                taken += 1
            found[lexeme] = max(found.get(lexeme, 0.0), float(row[at]))
    return sorted(found, key=lambda lexeme: (-found[lexeme], lexeme))[:RELATED_MAX]
