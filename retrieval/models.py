from django.db import models
from django.utils import timezone
from pgvector.django import VectorField

from memories.models import Scope


class EmbeddingTarget(models.TextChoices):
    FACT = "fact"
    EPISODE = "episode"
    TURN = "turn"
    ENTITY = "entity"


class Embedding(models.Model):
    """A vector beside its row, keyed by (target, model name).

    The column is an untyped `vector`, so vectors of several models (and dimensions) live side
    by side; a new model is filled in beside the old one and switched to atomically. Approximate
    search uses one partial HNSW expression index per model,
    `USING hnsw ((vec::vector(DIM)) vector_cosine_ops) WHERE model = 'NAME'`, created when the
    model is first used (see retrieval/embeddings.py); queries repeat that cast and predicate.
    """

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="embeddings")
    target_type = models.CharField(max_length=16, choices=EmbeddingTarget.choices)
    target_id = models.BigIntegerField()
    model = models.CharField(max_length=120)
    vec = VectorField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["target_type", "target_id", "model"], name="retrieval_embedding_unique_target_model"),
        ]
        indexes = [
            # Exact search inside a small scope: WHERE scope_id = … AND model = … AND target_type = ….
            models.Index(fields=["scope", "model", "target_type"], name="retr_embedding_scope_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.target_type}:{self.target_id} ({self.model})"
