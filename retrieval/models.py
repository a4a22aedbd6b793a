from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.utils import timezone

from memories.models import Scope


class Collection(models.TextChoices):
    """A BM25 corpus of a scope: each has its own term statistics and its own ranked list."""

    FACT = "fact"
    EPISODE = "episode"
    TURN = "turn"
    # A turn together with its neighbours in the session (±1, ±2 turns), centred on the turn.
    TURN_W1 = "turn_w1"
    TURN_W2 = "turn_w2"


class SearchDocumentQuerySet(models.QuerySet):
    def in_scope(self, scope: Scope) -> "SearchDocumentQuerySet":
        return self.filter(scope=scope)


class SearchDocument(models.Model):
    """The indexed text of a fact, an episode, a turn or a window of turns (target_id: the centre turn).

    `tsv` is `to_tsvector('english', text)` and `length` its number of tokens (BM25's |d|). Its
    vector is stored in Embedding with target_type `doc_<collection>` and target_id = this row's id.
    """

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="search_documents")
    collection = models.CharField(max_length=16, choices=Collection.choices)
    target_id = models.BigIntegerField()
    text = models.TextField()
    tsv = SearchVectorField()
    length = models.PositiveIntegerField()
    # Who said it (turns, windows: the centre turn's speaker; facts: the subject), for speaker-aware ranking.
    speaker = models.CharField(max_length=200, blank=True)
    occurred_at = models.DateTimeField(null=True, blank=True)
    indexed_at = models.DateTimeField(default=timezone.now)

    objects = SearchDocumentQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["collection", "target_id", "scope"], name="retrieval_searchdoc_unique_target_scope"),
        ]
        indexes = [
            # A time window's documents (retrieval/search/eligibility.py: window_documents).
            models.Index(fields=["scope", "occurred_at"], name="retr_searchdoc_moment_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.collection}:{self.target_id}"


class Posting(models.Model):
    """One lexeme of one search document with its term frequency: BM25's inverted index.

    Scoring from postings reads only the matched (lexeme, document) pairs through one btree,
    instead of unnesting the tsvector of every matching document; the document's length and
    speaker are copied here so the score needs no visit to the documents."""

    # No index of its own: the lookup index below starts with scope. No constraint in the database
    # either, for scope or document: a document's dozens of postings each cost two foreign-key
    # checks at commit, measured at a third of indexing's time outside the model. A posting is
    # derived from its document's tsvector and goes with it: by Django's cascade when documents
    # or scopes are deleted through the ORM, by `documents_erase` and `_postings` in SQL
    # (tests/retrieval/test_hygiene.py).
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False)
    collection = models.CharField(max_length=16, choices=Collection.choices)
    lexeme = models.TextField()
    document = models.ForeignKey(SearchDocument, on_delete=models.CASCADE, related_name="postings", db_index=False, db_constraint=False)
    tf = models.IntegerField()
    length = models.IntegerField()
    # The document's speaker, so the speaker boost is part of the score before any document is
    # read (the best `limit` are then found by reading documents in score order).
    speaker = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        indexes = [
            # BM25's lookup index, `retr_posting_lookup_idx`, is made in SQL by migration 0011:
            # (scope, collection, lexeme, document) INCLUDE (tf, length, speaker). It serves WHERE
            # scope_id = … AND collection = ANY(…) AND lexeme = ANY(…) as an index-only scan, and
            # a lexeme's postings after a pack's last document as one range (retrieval/packs.py).
            # Rewriting or deleting a document's postings: WHERE document_id = ANY(…).
            models.Index(fields=["document"], name="retr_posting_document_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.lexeme}@{self.document_id}×{self.tf}"


class PostingPack(models.Model):
    """A lexeme's postings in one collection of a large scope, packed into arrays (retrieval/packs.py):
    what BM25 reads in one row instead of a row per posting. Built by the indexer from the postings
    up to `max_document`; the postings of later documents are read as rows beside it, and so are
    those of its documents whose postings were deleted or rewritten since (`PostingGone`, written
    by migration 0011's triggers). A pack whose count, less what is gone, and the rows read do not
    add up to the lexeme's df is not used."""

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="+", db_index=False)
    collection = models.CharField(max_length=16, choices=Collection.choices)
    lexeme = models.TextField()
    postings = models.IntegerField()  # how many postings the arrays hold
    max_document = models.BigIntegerField()  # the largest document id packed
    # Parallel arrays in network byte order, one entry per posting: document ids (int8), tf
    # (int2), lengths (int4), and the speaker as its position in `speakers` (int4, from 1).
    documents = models.BinaryField()
    tfs = models.BinaryField()
    lengths = models.BinaryField()
    speaker_codes = models.BinaryField()
    speakers = ArrayField(models.TextField(), default=list)
    built_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "collection", "lexeme"], name="retrieval_postingpack_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.collection}:{self.lexeme}×{self.postings}"


class PostingGone(models.Model):
    """A packed posting deleted or rewritten since its pack was built (a window rewritten when its
    session goes on, a turn forgotten): the pack's entry for `document` is not used, and the
    document's current posting, if any, is read as a row. Written by migration 0011's triggers;
    cleared when the lexeme is packed again."""

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False)
    collection = models.CharField(max_length=16, choices=Collection.choices)
    lexeme = models.TextField()
    document_id = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "collection", "lexeme", "document_id"], name="retrieval_postinggone_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.collection}:{self.lexeme}@{self.document_id} gone"


class TermStat(models.Model):
    """Document frequency of one lexeme in one collection of a scope, maintained as documents come and go."""

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="+")
    collection = models.CharField(max_length=16, choices=Collection.choices)
    lexeme = models.TextField()
    df = models.IntegerField()

    class Meta:
        constraints = [
            # Also serves the idf lookup: WHERE scope_id = … AND collection = ANY(…) AND lexeme = ANY(…).
            models.UniqueConstraint(fields=["scope", "collection", "lexeme"], name="retrieval_termstat_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.collection}:{self.lexeme}={self.df}"


class CorpusStat(models.Model):
    """Document count and total token count of one collection of a scope (BM25's N and avgdl)."""

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="+")
    collection = models.CharField(max_length=16, choices=Collection.choices)
    doc_count = models.IntegerField(default=0)
    total_length = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "collection"], name="retrieval_corpusstat_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id}/{self.collection}: {self.doc_count} docs"


class IndexState(models.Model):
    """How far indexing of a scope has got: the highest fact, episode and turn id indexed, and
    the embedding model its vectors were made with. A cheap `id > watermark` check tells recall
    whether anything is pending; the full sweep of the index task catches rows committed out of
    id order."""

    scope = models.OneToOneField(Scope, on_delete=models.CASCADE, related_name="index_state")
    fact_mark = models.BigIntegerField(default=0)
    episode_mark = models.BigIntegerField(default=0)
    turn_mark = models.BigIntegerField(default=0)
    model = models.CharField(max_length=120, blank=True)
    # The distinct speakers of turns and episodes indexed (at most MAX_SPEAKERS + 1, more means
    # too many), so a query naming one is recognised cheaply.
    speakers = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"index of {self.scope_id}"
