from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse

from accounts.admin import ViewOnly
from accounts.permissions import Principal
from memoryweb.errors import MemorywebError
from memories.models import Entity, EntityAlias, EntityMerge, Episode, Fact, MergeProposal, Scope
from memories.scopes import scope_update, scope_update_check
from memories.services.dedup import proposal_dismiss, proposal_merge
from memories.services.extract import episode_retry
from memories.services.facts import fact_restore, fact_retract
from memories.services.merge import entity_merge, entity_merge_preview, entity_merge_undo
from retrieval.services import merge_documents_refresh


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


# Memory rows: shown here, changed only by the actions below, each calling the audited service a
# page or the CLI calls (as the signed-in superuser's Principal, so the superuser must be an editor
# of the scope's team). A service's refusal becomes a message on the list, never a 500.

def _each(modeladmin, request, rows, change, done: str) -> None:
    """Run `change(row)` for each row; report refusals one by one and the count of the rest."""
    count = 0
    for row in rows:
        try:
            change(row)
        except MemorywebError as exc:
            modeladmin.message_user(request, f"{row}: {exc.message}", messages.ERROR)
        else:
            count += 1
    if count:
        modeladmin.message_user(request, f"{done} {count}.", messages.SUCCESS)


@admin.register(Episode)
class EpisodeAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["public_id", "scope", "status", "speaker", "occurred_at", "ingested_at", "attempts", "error"]
    list_filter = ["scope", "status", "source", "occurred_at", "ingested_at"]
    search_fields = ["text", "speaker", "error", "public_id"]
    list_select_related = ["scope"]
    actions = ["retry"]

    @admin.action(description="Retry the selected failed episodes")
    def retry(self, request, queryset) -> None:
        actor = Principal(user=request.user)
        _each(self, request, queryset.select_related("scope"), lambda episode: episode_retry(
            scope=episode.scope, episode_public_id=episode.public_id, actor=actor), "Queued again:")


class AliasInline(ViewOnly, admin.TabularInline):
    model = EntityAlias
    extra = 0
    fields = ["alias", "normalized", "created_at"]


class MergedFilter(admin.SimpleListFilter):
    title = "merged"
    parameter_name = "merged"

    def lookups(self, request, model_admin):
        return [("no", "canonical"), ("yes", "merged into another")]

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(merged_into__isnull=self.value() == "no")
        return queryset


@admin.register(Entity)
class EntityAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["name", "kind", "scope", "merged_into", "created_at"]
    list_filter = ["scope", "kind", MergedFilter, "created_at"]
    search_fields = ["name", "aliases__alias", "public_id"]
    list_select_related = ["scope", "merged_into"]
    inlines = [AliasInline]
    actions = ["merge"]

    @admin.action(description="Merge the two selected entities (shows what moves first)")
    def merge(self, request, queryset):
        first, second, *rest = [*queryset.select_related("scope").order_by("pk"), None, None]
        if first is None or second is None or any(rest) or first.scope_id != second.scope_id:
            self.message_user(request, "Select exactly two entities of one scope to merge.", messages.ERROR)
            return None
        # The newer one merges into the older by default; the confirmation page can swap them.
        source, target = (first, second) if request.POST.get("source") == str(first.pk) else (second, first)
        if "swap" in request.POST:
            source, target = target, source
        actor = Principal(user=request.user)
        try:
            if "confirm" in request.POST:
                merge = entity_merge(principal=actor, scope=source.scope, source=source, target=target)
                merge_documents_refresh(merge)
                self.message_user(request, f"Merged {source} into {target} (merge {merge.public_id}; undo it under "
                                           f"Entity merges).", messages.SUCCESS)
                return None
            preview = entity_merge_preview(principal=actor, scope=source.scope, source=source, target=target)
        except MemorywebError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return None
        return TemplateResponse(request, "admin/memories/entity/merge_confirmation.html", {
            **self.admin_site.each_context(request), "title": "Merge two entities", "opts": self.model._meta,
            "preview": preview, "queryset": [first, second], "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        })


@admin.register(EntityMerge)
class EntityMergeAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["public_id", "source", "target", "scope", "by_label", "at", "undone_at"]
    list_filter = ["scope", "at", "undone_at"]
    search_fields = ["public_id", "source__name", "target__name"]
    list_select_related = ["scope", "source", "target"]
    actions = ["undo"]

    @admin.action(description="Undo the selected merges")
    def undo(self, request, queryset) -> None:
        actor = Principal(user=request.user)

        def undo(merge: EntityMerge) -> None:
            entity_merge_undo(principal=actor, scope=merge.scope, merge_id=merge.public_id)
            merge_documents_refresh(merge)

        # Latest first: an earlier merge can be undone only once the later ones involving it are.
        _each(self, request, queryset.select_related("scope").order_by("-id"), undo, "Undone:")


@admin.register(MergeProposal)
class MergeProposalAdmin(ViewOnly, admin.ModelAdmin):
    """Deduplication's proposals (memories/services/dedup.py), from the nightly run or `memoryweb dedup`."""

    list_display = ["source", "target", "kind", "score", "status", "scope", "created_at", "decided_by", "merge"]
    list_filter = ["scope", "status", "kind", "created_at"]
    search_fields = ["source__name", "target__name", "public_id"]
    list_select_related = ["scope", "source", "target", "merge"]
    actions = ["merge", "dismiss"]

    @admin.action(description="Merge the selected proposals (source into target; undo under Entity merges)")
    def merge(self, request, queryset) -> None:
        actor = Principal(user=request.user)

        def merge(proposal: MergeProposal) -> None:
            applied = proposal_merge(principal=actor, proposal=proposal)
            if applied.merge is None:
                raise MemorywebError(applied.skipped)
            merge_documents_refresh(applied.merge)

        # Surest first, as the nightly run merges them.
        _each(self, request, queryset.select_related("scope").order_by("-score", "id"), merge, "Merged:")

    @admin.action(description="Dismiss the selected proposals (the pair is not proposed again)")
    def dismiss(self, request, queryset) -> None:
        actor = Principal(user=request.user)
        _each(self, request, queryset.select_related("scope"),
              lambda proposal: proposal_dismiss(principal=actor, proposal=proposal), "Dismissed:")


@admin.register(Fact)
class FactAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["sentence", "subject", "attribute", "value", "status", "provenance", "valid_from", "valid_to", "scope"]
    list_filter = ["scope", "status", "provenance", "valid_from", "valid_to", "created_at"]
    search_fields = ["sentence", "value", "subject__name", "attribute", "public_id"]
    list_select_related = ["scope", "subject"]
    actions = ["retract", "restore"]

    @admin.action(description="Retract the selected facts")
    def retract(self, request, queryset) -> None:
        actor = Principal(user=request.user)
        _each(self, request, queryset.select_related("scope"), lambda fact: fact_retract(
            scope=fact.scope, fact_public_id=fact.public_id, actor=actor, reason="retracted in the admin"), "Retracted:")

    @admin.action(description="Restore the selected facts")
    def restore(self, request, queryset) -> None:
        actor = Principal(user=request.user)
        _each(self, request, queryset.select_related("scope"), lambda fact: fact_restore(
            scope=fact.scope, fact_public_id=fact.public_id, actor=actor), "Restored:")
