from django.contrib import admin

from memories.models import Scope


@admin.register(Scope)
class ScopeAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "team", "created_at"]
    search_fields = ["slug", "name", "team__slug"]
    autocomplete_fields = ["team"]
