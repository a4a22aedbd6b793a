import uuid

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone


class User(AbstractUser):
    """Custom from the first migration, so fields can be added without a painful swap later."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)

    class Meta(AbstractUser.Meta):
        constraints = [
            # `user_create` refuses "Ada" when "ada" exists; two processes creating them at once
            # both pass that check, so the database decides.
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique"),
        ]


class Team(models.Model):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # The team created with a user, holding that user's own scopes.
    personal_for = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="personal_team"
    )
    created_at = models.DateTimeField(default=timezone.now)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="teams")

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer (read)"
    EDITOR = "editor", "Editor (read, write, correct)"
    ADMIN = "admin", "Admin (also members, tokens, delete)"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "team"], name="accounts_membership_one_per_user_team"),
            models.CheckConstraint(
                condition=models.Q(role__in=[r.value for r in Role]), name="accounts_membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


class ApiTokenQuerySet(models.QuerySet):
    def usable(self) -> "ApiTokenQuerySet":
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now))


class ApiToken(models.Model):
    """A bearer token for agents. The secret is shown once; only its SHA-256 is stored.

    The full token reads `mw_<prefix>_<secret>`; the prefix is public and finds the row, the
    hash is compared in constant time.
    """

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    scopes = models.ManyToManyField("memories.Scope", related_name="api_tokens", blank=True)
    can_write = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} (mw_{self.prefix}_…)"

    @property
    def is_usable(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()


class AuditEvent(models.Model):
    """Who (user or token) did what to which row, before and after, when. Append-only."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    scope = models.ForeignKey("memories.Scope", null=True, blank=True, on_delete=models.CASCADE, related_name="audit_events")
    actor_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor_token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor_label = models.CharField(max_length=200, blank=True)  # kept when the user or token is deleted
    action = models.CharField(max_length=64)
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=64)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        db_table = "memories_auditevent"  # created by the memories app; the table kept its name
        ordering = ["-created_at", "-id"]
        indexes = [
            # The history page of one row: WHERE target_type = … AND target_id = … ORDER BY created_at.
            models.Index(fields=["target_type", "target_id", "created_at"], name="mem_audit_target_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_label} {self.action} {self.target_type}:{self.target_id}"


class IdempotencyState(models.TextChoices):
    IN_PROGRESS = "in_progress", "In progress"
    DONE = "done", "Done"


class IdempotentRequest(models.Model):
    """A write sent with an idempotency key, and the answer it got (`accounts/idempotency.py`).

    A retry with the same key and the same request gets `response_status` and `response_body`
    again instead of writing twice. Keys are per principal: `principal_key` is `t<token pk>` for
    a token, `u<user pk>` for a user acting without one (the browser, the CLI)."""

    principal_key = models.CharField(max_length=32)
    key = models.CharField(max_length=255)
    operation = models.CharField(max_length=128)
    body_hash = models.CharField(max_length=64)  # SHA-256 of the operation, its path and its canonical body
    state = models.CharField(max_length=16, choices=IdempotencyState.choices, default=IdempotencyState.IN_PROGRESS)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # Two requests claiming one key at once: the database lets one INSERT through.
            models.UniqueConstraint(fields=["principal_key", "key"], name="accounts_idempotentrequest_one_per_key"),
            models.CheckConstraint(
                condition=models.Q(state__in=[s.value for s in IdempotencyState]), name="accounts_idempotentrequest_state_valid"
            ),
        ]
        indexes = [
            # Pruning: DELETE … WHERE created_at < now() - MEMORYWEB_IDEMPOTENCY_KEY_HOURS.
            models.Index(fields=["created_at"], name="accounts_idem_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.principal_key} {self.key} ({self.operation}, {self.state})"


class CallDoor(models.TextChoices):
    API = "api", "API"
    MCP = "mcp", "MCP"


class ApiCall(models.Model):
    """One call through the API or MCP, reads too, refused ones too (`accounts/calllog.py`):
    who (user and token prefix, none when unauthenticated), what, on which scope, the status and
    how long it took. Kept MEMORYWEB_CALL_LOG_DAYS days."""

    door = models.CharField(max_length=8, choices=CallDoor.choices)
    operation = models.CharField(max_length=128)  # "POST /scopes/{slug}/remember"; an MCP tool's name
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    token_prefix = models.CharField(max_length=16, blank=True)  # kept when the token is deleted
    # The scope the call named, when it exists (also for a refused caller, so its admins see
    # who knocked); the slug as sent is kept either way. A scope's log goes with the scope.
    scope = models.ForeignKey("memories.Scope", null=True, blank=True, on_delete=models.CASCADE, related_name="calls")
    scope_slug = models.CharField(max_length=64, blank=True)
    status = models.PositiveSmallIntegerField()
    latency_ms = models.FloatField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # A scope's log, newest first: WHERE scope_id = … [AND created_at >= …] ORDER BY created_at DESC.
            models.Index(fields=["scope", "-created_at"], name="accounts_apicall_scope_idx"),
            # Pruning: DELETE … WHERE created_at < now() - MEMORYWEB_CALL_LOG_DAYS; the admin's list.
            models.Index(fields=["created_at"], name="accounts_apicall_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.door} {self.operation} {self.status}"


class SignInFailureKind(models.TextChoices):
    ACCOUNT = "account", "A failed sign-in for this account"
    ADDRESS = "address", "A failed sign-in from this client address"
    TOKEN = "token", "A bad API token from this client address"


class SignInFailure(models.Model):
    """One failed sign-in or bad API token, counted against an account or a client address
    (accounts/lockout.py). Only the window's rows matter; older ones are deleted as new ones come."""

    kind = models.CharField(max_length=16, choices=SignInFailureKind.choices)
    key = models.CharField(max_length=200)  # the lower-cased user name, or the client address
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["kind", "key", "at"], name="acc_signinfail_key_idx"),
            models.Index(fields=["at"], name="acc_signinfail_at_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} at {self.at:%Y-%m-%d %H:%M:%S}"
