from django import forms
from django.contrib import admin

from accounts.permissions import Principal
from memoryweb.errors import MemorywebError
from memories.models import Scope
from memories.scopes import scope_update, scope_update_check


class ScopeAdminForm(forms.ModelForm):
    """Edits name, description, team and ranking weights, validated and saved by `scope_update`."""

    weights = forms.JSONField(
        required=False,
        help_text='Ranking weights from 0 to 1, e.g. {"similarity": 0.65, "importance": 0.3, "recency": 0.05}; '
        "empty: the defaults.",
    )
    principal: Principal  # set by ScopeAdmin.get_form for the request's user

    class Meta:
        model = Scope
        fields = ["name", "description", "team"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["weights"].initial = (self.instance.settings or {}).get("weights", {})

    def changes(self) -> dict:
        data = self.cleaned_data
        return {"name": data["name"], "description": data["description"], "team": data["team"], "weights": data["weights"] or {}}

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                scope_update_check(principal=self.principal, scope=self.instance, **self.changes())
            except MemorywebError as exc:
                raise forms.ValidationError(exc.message) from None
        return data


@admin.register(Scope)
class ScopeAdmin(admin.ModelAdmin):
    """Scopes are created with `memoryweb scope create` and changed here only through `scope_update`
    (audited); deleting one would delete its memories unaudited, so the admin cannot."""

    form = ScopeAdminForm
    list_display = ["slug", "name", "team", "created_at"]
    search_fields = ["slug", "name", "team__slug"]
    autocomplete_fields = ["team"]
    fields = ["slug", "name", "description", "team", "weights", "created_at"]
    readonly_fields = ["slug", "created_at"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.principal = Principal(user=request.user)
        return form

    def save_model(self, request, obj, form, change) -> None:
        scope_update(principal=form.principal, scope=obj, **form.changes())

    def save_related(self, request, form, formsets, change) -> None:
        pass  # the form has no many-to-many fields; scope_update saved everything
