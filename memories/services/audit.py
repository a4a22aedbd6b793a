"""The audit trail: every manual change, and every token action, writes one AuditEvent."""

from accounts.permissions import Principal
from memories.models import AuditEvent, Scope


def audit_record(
    *, principal: Principal | None, action: str, target_type: str, target_id, scope: Scope | None = None,
    before: dict | None = None, after: dict | None = None,
) -> AuditEvent:
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
