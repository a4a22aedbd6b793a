import uuid

from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from accounts.models import Team

SCOPE_SLUG = RegexValidator(r"^[a-z0-9][a-z0-9_-]{0,62}$", "Use 1-63 lowercase letters, digits, '-' or '_'.")

# Retrieval lane weights (similarity, importance, recency); a scope may override them.
DEFAULT_WEIGHTS = {"similarity": 0.65, "importance": 0.30, "recency": 0.05}


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


class AuditEvent(models.Model):
    """Who (user or token) did what to which row, before and after, when. Append-only."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    scope = models.ForeignKey(Scope, null=True, blank=True, on_delete=models.CASCADE, related_name="audit_events")
    actor_user = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor_token = models.ForeignKey("accounts.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor_label = models.CharField(max_length=200, blank=True)  # kept when the user or token is deleted
    action = models.CharField(max_length=64)
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=64)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The history page of one row: WHERE target_type = … AND target_id = … ORDER BY created_at.
            models.Index(fields=["target_type", "target_id", "created_at"], name="memories_audit_target_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_label} {self.action} {self.target_type}:{self.target_id}"
