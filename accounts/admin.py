from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.audit import audit_record
from accounts.models import ApiCall, ApiToken, AuditEvent, IdempotentRequest, Membership, Team, User
from accounts.permissions import Principal
from accounts.tokens import token_revoke


class ViewOnly:
    """For rows that change only through services (audited, and holding rules such as "a team
    keeps an admin"): the admin shows them and changes nothing itself; a forged change or delete
    POST is refused (403). Actions that call a service are the only way to change them here."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class MembershipInline(ViewOnly, admin.TabularInline):
    model = Membership
    extra = 0
    fields = ["user", "role", "created_at"]


def _plain(value):
    """A form value as JSON for the audit log: a set of rows as their names, anything else as text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "__iter__"):
        return sorted(str(item) for item in value)
    return str(value)


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    """Accounts are edited here (the one model the admin changes directly), and every change is
    audited: which fields, before and after; a password only as "changed"."""

    list_display = ["username", "email", "is_staff", "is_active", "date_joined"]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # it would drop memberships (perhaps a team's last admin) and tokens, unaudited; deactivate instead

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        fields = [f for f in form.changed_data if not f.startswith("password") and f != "usable_password"]
        audit_record(
            principal=Principal(user=request.user), action="user.change" if change else "user.create",
            target_type="user", target_id=obj.public_id,
            before={f: _plain(form.initial.get(f)) for f in fields} if change else None,
            after={**{f: _plain(form.cleaned_data.get(f)) for f in fields},
                   **({"password": "set"} if not change and obj.has_usable_password() else {})},
        )

    def user_change_password(self, request, id, form_url=""):
        response = super().user_change_password(request, id, form_url)
        if request.method == "POST" and response.status_code == 302:
            user = User.objects.get(pk=id)
            audit_record(principal=Principal(user=request.user), action="user.password", target_type="user",
                         target_id=user.public_id, after={"password": "changed"})
        return response


@admin.register(Team)
class TeamAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["slug", "name", "personal_for", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["user", "team", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__username", "team__slug"]


@admin.register(ApiToken)
class ApiTokenAdmin(ViewOnly, admin.ModelAdmin):
    """Tokens are issued with `memoryweb token create` (the secret is shown there, once) and
    changed only by the audited token services: here they are shown, and revoked by the action.
    The admin shows the public prefix only; the hash is never displayed."""

    list_display = ["name", "user", "display_prefix", "can_write", "expires_at", "revoked_at", "last_used_at"]
    list_filter = ["can_write"]
    search_fields = ["name", "prefix", "user__username"]
    fields = ["name", "user", "display_prefix", "scopes", "can_write", "expires_at", "revoked_at", "last_used_at", "created_at"]
    actions = ["revoke"]

    @admin.display(description="token")
    def display_prefix(self, obj: ApiToken) -> str:
        return f"mw_{obj.prefix}_…"

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset) -> None:
        count = 0
        actor = Principal(user=request.user)
        for token in queryset.filter(revoked_at__isnull=True):
            token_revoke(token=token, actor=actor)
            count += 1
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)


@admin.register(ApiCall)
class ApiCallAdmin(ViewOnly, admin.ModelAdmin):
    """The caller log (every API and MCP call), as written by the doors; pruned after MEMORYWEB_CALL_LOG_DAYS."""

    list_display = ["created_at", "door", "operation", "status", "latency_ms", "user", "token_prefix", "scope_slug"]
    list_filter = ["door", "status", "operation", "created_at"]
    search_fields = ["operation", "scope_slug", "token_prefix", "user__username"]
    list_select_related = ["user"]
    date_hierarchy = "created_at"
    show_full_result_count = False  # no COUNT(*) over a busy log on every page


@admin.register(IdempotentRequest)
class IdempotentRequestAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["created_at", "principal_key", "key", "operation", "state", "response_status"]
    list_filter = ["state", "operation"]
    search_fields = ["key", "principal_key"]


@admin.register(AuditEvent)
class AuditEventAdmin(ViewOnly, admin.ModelAdmin):
    """The audit log, append-only: read here, written only by `audit_record`."""

    list_display = ["created_at", "actor_label", "action", "target_type", "target_id", "scope"]
    list_filter = ["action", "target_type", "scope", "created_at"]
    search_fields = ["actor_label", "action", "target_id"]
    list_select_related = ["scope"]
    fields = ["created_at", "actor_label", "actor_user", "actor_token", "action", "target_type", "target_id", "scope", "before", "after"]
