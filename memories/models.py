import uuid

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Greatest, Least
from django.utils import timezone
from pgvector.django import VectorField

from accounts.models import Team

SCOPE_SLUG = RegexValidator(r"^[a-z0-9][a-z0-9_-]{0,62}$", "Use 1-63 lowercase letters, digits, '-' or '_'.")

# Retrieval lane weights (similarity, importance, recency); a scope may override them.
DEFAULT_WEIGHTS = {"similarity": 0.65, "importance": 0.30, "recency": 0.05}
# Extracted facts below this confidence wait for review; by default none wait.
DEFAULT_REVIEW_THRESHOLD = 0.0


class ScopeQuerySet(models.QuerySet):
    def for_team(self, team: Team) -> "ScopeQuerySet":
        return self.filter(team=team)


class Scope(models.Model):
    """One shared memory space. Everything in memories belongs to exactly one scope."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="scopes")
    slug = models.CharField(max_length=63, unique=True, validators=[SCOPE_SLUG])
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = ScopeQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def weights(self) -> dict[str, float]:
        return {**DEFAULT_WEIGHTS, **(self.settings or {}).get("weights", {})}

    @property
    def review_threshold(self) -> float:
        """Extracted facts less confident than this wait in the review queue (0: none wait)."""
        return float((self.settings or {}).get("review_threshold", DEFAULT_REVIEW_THRESHOLD))

    @property
    def review_before_recall(self) -> bool:
        """Every extracted fact is held out of every read until a person approves it."""
        return bool((self.settings or {}).get("review_before_recall", False))


class ScopedQuerySet(models.QuerySet):
    def in_scope(self, scope: Scope):
        return self.filter(scope=scope)


class Session(models.Model):
    """A raw conversation, identified by the caller's id within a scope."""

    public_id = models.UUIDField(default=uuid.uuid4, editable=False)  # unique with the scope (Meta)
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="sessions")
    external_id = models.CharField(max_length=200)
    started_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["public_id", "scope"], name="memories_session_public_id_in_scope"),
            models.UniqueConstraint(fields=["scope", "external_id"], name="memories_session_unique_external_id"),
        ]

    def __str__(self) -> str:
        return f"{self.scope.slug}/{self.external_id}"


class Turn(models.Model):
    """One raw message of a session. Append-only: never updated, never deleted by processing."""

    public_id = models.UUIDField(default=uuid.uuid4, editable=False)  # unique with the scope (Meta)
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="turns")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="turns")
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField()
    speaker = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    occurred_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        ordering = ["session_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["public_id", "scope"], name="memories_turn_public_id_in_scope"),
            models.UniqueConstraint(fields=["scope", "session", "external_id"], name="memories_turn_unique_external_id_in_scope"),
        ]
        indexes = [
            # Neighbouring turns of a hit: WHERE session_id = … ORDER BY position.
            models.Index(fields=["session", "position"], name="mem_turn_session_pos_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.session.external_id}:{self.external_id}"


# Episode.source of a summary written by consolidation (memories/services/consolidate.py).
CONSOLIDATION_SOURCE = "consolidation"


class EpisodeStatus(models.TextChoices):
    PENDING = "pending"
    PROCESSING = "processing"
    DONE = "done"
    FAILED = "failed"


class Episode(models.Model):
    """One thing that was said or stored. The raw text is kept whatever extraction does."""

    public_id = models.UUIDField(default=uuid.uuid4, editable=False)  # unique with the scope (Meta)
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="episodes")
    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.CASCADE, related_name="episodes")
    # A turn's one episode: unique with the scope (Meta), not alone, so the key holds on one node
    # when rows are distributed by scope (docs/ARCHITECTURE.md, "Past one database"); that
    # constraint's index, led by turn_id, also serves the look-ups by turn.
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.CASCADE, related_name="episodes", db_index=False)
    text = models.TextField()
    speaker = models.CharField(max_length=200, blank=True)
    occurred_at = models.DateTimeField()
    ingested_at = models.DateTimeField(default=timezone.now)
    importance = models.FloatField(null=True, blank=True)
    location = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=32, default="cli")
    author = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16, choices=EpisodeStatus.choices, default=EpisodeStatus.PENDING)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Who holds the 'processing' claim: the Celery task id, so a redelivered message (same id,
    # after its worker died) may take its own claim back; claimed_at lets a claim go stale. On a
    # pending episode, claimed_at is when the healing task last queued it (memories/services/heal.py).
    claim_id = models.CharField(max_length=64, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    # Facts the model gave beyond MEMORYWEB_EXTRACT_MAX_FACTS in the last extraction, not stored:
    # kept so a person can see that a text said more than was kept.
    facts_dropped = models.PositiveIntegerField(default=0)
    # Consolidation (memories/services/consolidate.py): an old, unimportant episode points at the
    # summary episode that condensed it; it is kept, and still found. A summary itself has source
    # CONSOLIDATION_SOURCE. A summary goes when one of its originals is forgotten, and its other
    # originals are unlinked (SET_NULL), to be condensed again. The FK's index serves "the
    # originals of a summary".
    consolidated_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="consolidated_from"
    )

    objects = ScopedQuerySet.as_manager()

    class Meta:
        ordering = ["occurred_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["public_id", "scope"], name="memories_episode_public_id_in_scope"),
            models.UniqueConstraint(fields=["turn", "scope"], name="memories_episode_turn_in_scope"),
            models.CheckConstraint(
                condition=models.Q(importance__isnull=True) | models.Q(importance__gte=0, importance__lte=1),
                name="memories_episode_importance_0_1",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=[s.value for s in EpisodeStatus]), name="memories_episode_status_valid"
            ),
        ]
        indexes = [
            # Time filters in recall: WHERE scope_id = … AND occurred_at BETWEEN … .
            models.Index(fields=["scope", "occurred_at"], name="mem_episode_scope_time_idx"),
            # Retry queues and the failed list: WHERE status IN ('pending', 'failed').
            models.Index(fields=["scope", "status"], name="mem_episode_status_idx"),
            # What is not finished yet, in every scope: the background runner's and healing's sweeps
            # (retrieval/background.py, memories/services/heal.py), a few rows of millions.
            models.Index(fields=["status", "ingested_at"], condition=models.Q(status__in=["pending", "processing"]),
                         name="mem_episode_unfinished_idx"),
        ]

    def __str__(self) -> str:
        return f"episode {self.public_id} ({self.status})"


class EntityKind(models.TextChoices):
    PERSON = "person"
    ORGANIZATION = "organization"
    PLACE = "place"
    THING = "thing"
    OTHER = "other"


class Entity(models.Model):
    """One canonical identity per scope. A merge keeps `merged_into`, never deletes."""

    public_id = models.UUIDField(default=uuid.uuid4, editable=False)  # unique with the scope (Meta)
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=EntityKind.choices, default=EntityKind.OTHER)
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged_from")
    created_at = models.DateTimeField(default=timezone.now)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["public_id", "scope"], name="memories_entity_public_id_in_scope"),
        ]
        verbose_name_plural = "entities"
        indexes = [models.Index(fields=["scope", "name"], name="mem_entity_scope_name_idx")]

    def __str__(self) -> str:
        return self.name


class EntityAlias(models.Model):
    """A name an entity goes by ("Google", "google", "my company"). One entity per alias in a scope."""

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="aliases")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="aliases")
    alias = models.CharField(max_length=200)
    normalized = models.CharField(max_length=200)  # casefolded, whitespace collapsed
    created_at = models.DateTimeField(default=timezone.now)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "entity aliases"
        constraints = [
            models.UniqueConstraint(fields=["scope", "normalized"], name="memories_alias_unique_per_scope"),
        ]
        indexes = [
            # Trigram resolution: WHERE scope_id = … AND normalized % 'query' (pg_trgm).
            GinIndex(OpClass(models.F("normalized"), name="gin_trgm_ops"), name="memories_alias_trgm_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.alias} → {self.entity}"


class FactStatus(models.TextChoices):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    RETRACTED = "retracted"
    # Extracted in a "review before recall" scope and not approved yet: part of no read (recall,
    # answers, lists, history) and of no reconciliation until a person approves it, which then
    # reconciles it (memories/services/review.py).
    HELD = "held"


class Review(models.TextChoices):
    """Where a fact stands with the people reviewing extraction (memories/services/review.py)."""

    NONE = "none"  # nobody needs to look: manual, or confident enough for its scope
    PENDING = "pending"  # waits in the review queue (held, or active but below the scope's threshold)
    APPROVED = "approved"
    REJECTED = "rejected"


class Provenance(models.TextChoices):
    EXTRACTED = "extracted"
    MANUAL = "manual"
    CONSOLIDATION = "consolidation"


class Fact(models.Model):
    """A state that holds from `valid_from` until `valid_to`. Never deleted: a new value
    supersedes the old one (status, `valid_to`), a retraction ends it."""

    public_id = models.UUIDField(default=uuid.uuid4, editable=False)  # unique with the scope (Meta)
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="facts")
    subject = models.ForeignKey(Entity, on_delete=models.PROTECT, related_name="facts")
    attribute = models.CharField(max_length=64)
    value = models.TextField()
    value_normalized = models.CharField(max_length=300)
    object_entity = models.ForeignKey(Entity, null=True, blank=True, on_delete=models.PROTECT, related_name="object_of")
    sentence = models.TextField()
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=FactStatus.choices, default=FactStatus.ACTIVE)
    supersedes = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by")
    source_episode = models.ForeignKey(Episode, null=True, blank=True, on_delete=models.SET_NULL, related_name="facts")
    confidence = models.FloatField(default=1.0)
    importance = models.FloatField(default=0.5)
    provenance = models.CharField(max_length=16, choices=Provenance.choices, default=Provenance.EXTRACTED)
    review = models.CharField(max_length=16, choices=Review.choices, default=Review.NONE)
    author = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        ordering = ["valid_from", "id"]
        constraints = [
            models.UniqueConstraint(fields=["public_id", "scope"], name="memories_fact_public_id_in_scope"),
            # One active fact per subject + attribute + value: re-extracting the same thing is a NOOP.
            models.UniqueConstraint(
                fields=["scope", "subject", "attribute", "value_normalized"],
                condition=models.Q(status="active"),
                name="memories_fact_one_active_per_value",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=["active", "held"]) | models.Q(valid_to__isnull=False),
                name="memories_fact_ended_has_valid_to",
            ),
            models.CheckConstraint(
                condition=models.Q(valid_to__isnull=True) | models.Q(valid_from__isnull=True) | models.Q(valid_to__gte=models.F("valid_from")),
                name="memories_fact_interval_ordered",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=[s.value for s in FactStatus]), name="memories_fact_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0, confidence__lte=1, importance__gte=0, importance__lte=1),
                name="memories_fact_scores_0_1",
            ),
            models.CheckConstraint(condition=models.Q(review__in=[r.value for r in Review]), name="memories_fact_review_valid"),
        ]
        indexes = [
            # Reconciliation and "where do I live?": WHERE scope_id = … AND subject_id = … AND attribute = … AND status = 'active'.
            models.Index(fields=["scope", "subject", "attribute", "status"], name="memories_fact_lookup_idx"),
            # Listing active facts of a scope and the as_of reads: WHERE scope_id = … AND status = ….
            models.Index(fields=["scope", "status", "valid_from"], name="mem_fact_scope_status_idx"),
            # The review queue: WHERE scope_id = … AND review = 'pending' ORDER BY created_at (few rows wait).
            models.Index(fields=["scope", "created_at"], condition=models.Q(review="pending"), name="mem_fact_review_queue_idx"),
        ]

    def __str__(self) -> str:
        return self.sentence


class FactSupport(models.Model):
    """Another episode that said a fact again. Reconciliation finds the value active already (a
    NOOP) and writes nothing on the fact, so without this row the fact would know only its
    first episode (`source_episode`); forgetting that episode must not erase what others said too.
    `sentence` is that episode's own wording of the fact, `valid_from` the time it said the value
    held from: a move back said while the value was current ("Oslo" again in April) is known by it
    when a move dated before it is told later (reconcile restores the value from it)."""

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="+")
    # fact_id lookups use the unique constraint; episode_id lookups (forgetting) the FK's index.
    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="supports", db_index=False)
    episode = models.ForeignKey(Episode, on_delete=models.CASCADE, related_name="fact_supports")
    sentence = models.TextField()
    valid_from = models.DateTimeField(null=True, blank=True)  # null: written before it was kept
    created_at = models.DateTimeField(default=timezone.now)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["fact", "episode", "scope"], name="memories_factsupport_unique_in_scope"),
        ]

    def __str__(self) -> str:
        return f"fact {self.fact_id} also from episode {self.episode_id}"


class MentionRole(models.TextChoices):
    ACTOR = "actor"
    OBJECT = "object"
    LOCATION = "location"
    OTHER = "other"


class Mention(models.Model):
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="mentions")
    episode = models.ForeignKey(Episode, on_delete=models.CASCADE, related_name="mentions")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions")
    role = models.CharField(max_length=16, choices=MentionRole.choices, default=MentionRole.OTHER)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["episode", "entity", "role", "scope"], name="memories_mention_unique_in_scope"),
        ]

    def __str__(self) -> str:
        return f"{self.entity} ({self.role}) in {self.episode_id}"


class EmbeddingTarget(models.TextChoices):
    FACT = "fact"
    EPISODE = "episode"
    TURN = "turn"
    ENTITY = "entity"
    # The search index's own vectors, target_id = SearchDocument.id (see SearchDocument).
    DOC_FACT = "doc_fact"
    DOC_EPISODE = "doc_episode"
    DOC_TURN = "doc_turn"
    DOC_TURN_W1 = "doc_turn_w1"
    DOC_TURN_W2 = "doc_turn_w2"


class Embedding(models.Model):
    """A vector beside its row, keyed by (target, model name).

    The column is an untyped `vector`, so vectors of several models (and dimensions) live side
    by side; a new model is filled in beside the old one and switched to atomically. Approximate
    search uses one partial HNSW expression index per model,
    `USING hnsw ((vec::vector(DIM)) vector_cosine_ops) WHERE model = 'NAME' AND NOT deferred`,
    created when the model is first used (see memories/services/vectors.py); approximate queries
    repeat that cast and predicate.
    """

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="embeddings")
    target_type = models.CharField(max_length=16, choices=EmbeddingTarget.choices)
    target_id = models.BigIntegerField()
    model = models.CharField(max_length=120)
    vec = VectorField()
    # Left out of the model's HNSW graph: the search index's vectors of a scope small enough to be
    # searched exactly (RETRIEVAL_EXACT_BELOW), where a graph entry costs an insert and serves no
    # query. The indexer adds them once the scope outgrows that (retrieval/indexing.py).
    deferred = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "retrieval_embedding"  # created by the retrieval app; the table kept its name
        constraints = [
            models.UniqueConstraint(fields=["target_type", "target_id", "model", "scope"], name="retrieval_embedding_unique_target_model_scope"),
        ]
        indexes = [
            # Exact search inside a small scope: WHERE scope_id = … AND model = … AND target_type = ….
            models.Index(fields=["scope", "model", "target_type"], name="retr_embedding_scope_idx"),
            # Whether a scope has vectors outside the graph: WHERE scope_id = … AND model = … AND deferred.
            models.Index(fields=["scope", "model"], condition=models.Q(deferred=True), name="retr_embedding_deferred_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.target_type}:{self.target_id} ({self.model})"


class VectorChange(models.Model):
    """One statement that wrote, changed or deleted turn vectors of a scope (rows of `retrieval_embedding` with
    target type doc_turn), added by a statement trigger on that table (migration 0016), whatever wrote them. A
    process holding a scope's turn vectors in memory (retrieval/matrix.py) compares the scope's (count, largest
    id) of these rows with the ones it was built at; the indexer keeps only the newest row of a scope
    (`vector_changes_prune`)."""

    scope_id = models.BigIntegerField()

    class Meta:
        db_table = "retrieval_vectorchange"
        indexes = [models.Index(fields=["scope_id", "id"], name="retr_vectorchange_scope_idx")]

    def __str__(self) -> str:
        return f"{self.scope_id}: change {self.pk}"


class EntityMerge(models.Model):
    """One merge of `source` into `target`, with exactly what it moved, so it can be undone.

    `moved` holds internal ids by kind (memories/services/merge.py: `MOVED_KINDS`): the facts whose
    subject or object entity moved, the mentions and aliases moved, the source's mentions dropped
    because the target had the same one, and the colliding active facts with how each was settled."""

    public_id = models.UUIDField(default=uuid.uuid4, editable=False)  # unique with the scope (Meta)
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="entity_merges")
    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="merges_as_source")
    target = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="merges_as_target")
    moved = models.JSONField(default=dict)
    by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    by_label = models.CharField(max_length=200, blank=True)  # kept when the user is deleted
    at = models.DateTimeField(default=timezone.now)
    undone_at = models.DateTimeField(null=True, blank=True)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["public_id", "scope"], name="memories_entitymerge_public_id_in_scope"),
            models.CheckConstraint(condition=~models.Q(source=models.F("target")), name="memories_entitymerge_distinct"),
        ]
        indexes = [
            # "Does a later merge involve these entities?" before an undo: WHERE scope_id = … AND undone_at IS NULL.
            models.Index(fields=["scope", "undone_at"], name="mem_entitymerge_scope_idx"),
        ]

    def __str__(self) -> str:
        return f"merge {self.public_id}: {self.source} → {self.target}"


class ProposalKind(models.TextChoices):
    """Which pass of deduplication proposed a merge (memories/services/dedup.py)."""

    EXACT = "exact"  # pass 1: the same normalised name
    CONTAINMENT = "containment"  # pass 2: one name's words inside the other's
    TRIGRAM = "trigram"  # pass 2: pg_trgm similarity of the normalised names
    EMBEDDING = "embedding"  # pass 3: cosine of the entity-name vectors


class ProposalStatus(models.TextChoices):
    PROPOSED = "proposed"
    MERGED = "merged"
    DISMISSED = "dismissed"  # by a person, or the merge it led to was undone


class MergeProposal(models.Model):
    """Deduplication's suggestion that `source` and `target` are one identity, with its evidence.

    Open (`proposed`) until merged (through `entity_merge`, linked in `merge`) or dismissed; a pair
    that was dismissed, or whose merge was undone, is not proposed again."""

    public_id = models.UUIDField(default=uuid.uuid4, editable=False)  # unique with the scope (Meta)
    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="merge_proposals")
    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=ProposalKind.choices)
    score = models.FloatField()
    evidence = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PROPOSED)
    merge = models.ForeignKey(EntityMerge, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=200, blank=True)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-score", "id"]
        constraints = [
            models.UniqueConstraint(fields=["public_id", "scope"], name="memories_mergeproposal_public_id_in_scope"),
            # One open proposal per pair, whichever way round: the nightly run updates it, never doubles it.
            models.UniqueConstraint(
                Least("source", "target"), Greatest("source", "target"), "scope",
                condition=models.Q(status="proposed"), name="memories_mergeproposal_one_open_per_pair_in_scope",
            ),
            models.CheckConstraint(condition=~models.Q(source=models.F("target")), name="memories_mergeproposal_distinct"),
            models.CheckConstraint(condition=models.Q(score__gte=0, score__lte=1), name="memories_mergeproposal_score_0_1"),
            models.CheckConstraint(
                condition=models.Q(status__in=[s.value for s in ProposalStatus]), name="memories_mergeproposal_status_valid"
            ),
        ]
        indexes = [
            # The open proposals of a scope, and the pairs decided before: WHERE scope_id = … AND status = ….
            models.Index(fields=["scope", "status"], name="mem_mergeproposal_scope_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source} → {self.target} ({self.kind} {self.score:.2f})"


class TombstoneKind(models.TextChoices):
    EPISODE = "episode", "Forgotten episode"
    SUBJECT = "subject", "Erased person"


class Tombstone(models.Model):
    """What an erasure erased, as keyed hashes only, so that a restore can erase it again.

    No erased text is kept: the four lists hold HMAC-SHA256 digests (memories/services/tombstones.py)
    of the erased episodes' public ids, of their turns' (session external id, turn id), of their
    texts with the time they were said, and of the person's normalised names and aliases. A
    restore (retrieval/tombstones.py) hashes the rows it wrote the same way and erases those that
    match. `scope` is where the tombstone applies; `origin` the scope of the erasure, kept when a
    scope is deleted or a tombstone copied into a scope restored from a backup of the origin."""

    public_id = models.UUIDField(default=uuid.uuid4, editable=False)  # the erasure's id (its receipt's)
    scope = models.ForeignKey(Scope, null=True, blank=True, on_delete=models.SET_NULL, related_name="tombstones")
    origin = models.UUIDField()  # public id of the scope the erasure ran in
    kind = models.CharField(max_length=16, choices=TombstoneKind.choices)
    erased_at = models.DateTimeField()
    erased_by = models.CharField(max_length=200)  # the principal's label: user name, and token prefix if any
    key_id = models.CharField(max_length=16)  # which secret key made the digests
    episodes = models.JSONField(default=list)
    turns = models.JSONField(default=list)
    texts = models.JSONField(default=list)
    names = models.JSONField(default=list)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        ordering = ["erased_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["scope", "public_id"], name="memories_tombstone_once_per_scope"),
            models.CheckConstraint(condition=models.Q(kind__in=[k.value for k in TombstoneKind]), name="memories_tombstone_kind_valid"),
        ]
        indexes = [
            # The tombstones a restore re-applies: WHERE scope_id = … OR origin IN (…).
            models.Index(fields=["origin"], name="mem_tombstone_origin_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} erased {self.erased_at:%Y-%m-%d} by {self.erased_by}"
