from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.models import ApiToken, Membership, Team, User
from accounts.permissions import Principal
from accounts.tokens import token_revoke


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    list_display = ["username", "email", "is_staff", "is_active", "date_joined"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "personal_for", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "team", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__username", "team__slug"]
    autocomplete_fields = ["user", "team"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are issued with `memoryweb token create` (the secret is shown there, once).
    The admin shows the public prefix only; the hash is never displayed."""

    list_display = ["name", "user", "display_prefix", "can_write", "expires_at", "revoked_at", "last_used_at"]
    list_filter = ["can_write"]
    search_fields = ["name", "prefix", "user__username"]
    fields = ["name", "user", "display_prefix", "scopes", "can_write", "expires_at", "revoked_at", "last_used_at", "created_at"]
    readonly_fields = ["user", "display_prefix", "revoked_at", "last_used_at", "created_at"]
    filter_horizontal = ["scopes"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

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
