"""The audit trail: every manual change, and every token and membership action, writes one AuditEvent.

It lives in accounts, the lowest domain layer, so that every layer above can audit."""

from accounts.models import AuditEvent
from accounts.permissions import Principal


def audit_record(
    *, principal: Principal | None, action: str, target_type: str, target_id, scope=None,
    before: dict | None = None, after: dict | None = None,
) -> AuditEvent:
    """Record one action. `scope` is the memories Scope the row belongs to (None for team-level rows)."""
    return AuditEvent.objects.create(
        scope=scope,
        actor_user=principal.user if principal else None,
        actor_token=principal.token if principal else None,
        actor_label=principal.label if principal else "system",
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        before=before,
        after=after,
    )
