"""HTMX pages that call retrieval's services: a scope's home (live search, remembering, the
recent episodes), forgetting an episode, and merging two entities or undoing a merge (each
followed by rewriting the moved facts' search documents, which name the subject, as the
`merge` command and the admin do). Doors only (see memories/views.py)."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from accounts.permissions import Access, can
from memoryweb.errors import MemorywebError
from memories import selectors
from memories.pages import page, principal_of, redirect_page, render_page
from memories.scopes import scope_get
from memories.services.extract import episode_get
from memories.services.facts import entity_list
from memories.services.ingest import remember
from memories.services.merge import entity_merge, entity_merge_undo
from memories.services.review import review_queue
from memories.views import ENTITY, entity_context, entity_on_page, merge_form, merge_pair
from retrieval.services import episode_forget, merge_documents_refresh, recall_evidence

TEMPLATE = "pages/scope.html"
# The fragments of the scope home htmx asks for, by the id of the element it targets.
_FRAGMENTS = {"results": "results", "episodes": "episodes"}


def _search(scope, query: str) -> dict:
    if not query:
        return {"query": query, "results": None, "search_error": None}
    try:
        # Evidence search: raw turns come back as turns beside facts and episodes.
        found = recall_evidence(scope=scope, query=query, k=10)
    except MemorywebError as exc:
        return {"query": query, "results": None, "search_error": exc.message, "status": exc.status}
    return {"query": query, "results": found.items, "search_error": None}


def _home_context(request: HttpRequest, scope, **extra) -> dict:
    episodes = selectors.episodes_recent(scope=scope)
    return {
        "scope": scope,
        "can_write": can(principal_of(request), scope, Access.WRITE),
        "episodes": episodes,
        "polling": selectors.has_unfinished(episodes),
        "entities": entity_list(scope=scope)[:60],
        "review_waiting": review_queue(principal=principal_of(request), scope=scope).count(),
        "form": {}, "remember_error": None,
        **extra,
    }


@page
@require_http_methods(["GET", "POST"])
def scope_home(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the page, or (htmx) the search results or the episode list it targets. POST: remember."""
    principal = principal_of(request)
    if request.method == "POST":
        return _remember(request, scope_get(principal, slug, Access.WRITE))
    scope = scope_get(principal, slug, Access.READ)
    search = _search(scope, request.GET.get("q", "").strip())
    status = search.pop("status", 200)
    fragment = _FRAGMENTS.get(request.htmx.target) if request.htmx else None
    return render_page(request, TEMPLATE, _home_context(request, scope, **search), fragment=fragment, status=status)


def _remember(request: HttpRequest, scope) -> HttpResponse:
    form = {name: request.POST.get(name, "") for name in ("text", "speaker", "occurred_at")}
    try:
        stored = remember(
            scope=scope, text=form["text"], speaker=form["speaker"].strip(), occurred_at=form["occurred_at"].strip() or None,
            actor=principal_of(request), source="web",
        )
    except MemorywebError as exc:
        context = _home_context(request, scope, form=form, remember_error=exc.message)
        return render_page(request, TEMPLATE, context, fragment="remember", status=exc.status)
    if not request.htmx:
        return redirect_page(request, reverse("scope", args=[scope.slug]))
    # The emptied form, and the episode list (out of band) with the new episode on top.
    context = _home_context(request, scope, stored=stored.episodes[0], oob=True)
    html = render_to_string(f"{TEMPLATE}#remember", context, request) + render_to_string(f"{TEMPLATE}#episodes", context, request)
    return HttpResponse(html)


@page
@require_http_methods(["GET", "POST"])
def episode_forget_view(request: HttpRequest, slug: str, episode_id: str) -> HttpResponse:
    """GET: ask to confirm. POST: erase the episode and what only it said, then go to the scope home."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    episode = episode_get(scope=scope, episode_public_id=episode_id)
    if request.method == "GET":
        return render_page(request, "pages/forget.html", {"scope": scope, "episode": episode})
    receipt = episode_forget(principal=principal, scope=scope, episode_public_id=episode.public_id)
    erased = ", ".join(f"{n} {kind}" for kind, n in sorted(receipt.counts.items()) if n) or "nothing else"
    messages.success(request, f"Episode forgotten; erased: {erased}.")
    return redirect_page(request, reverse("scope", args=[scope.slug]))


@page
@require_POST
def entity_merge_view(request: HttpRequest, slug: str, entity: str) -> HttpResponse:
    """Merge the pair the merge control names (after its preview), then go to the target's page,
    which offers to undo it; a refusal is shown in the control."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    found = entity_on_page(scope, entity)
    form = merge_form(request.POST)
    try:
        source, target = merge_pair(scope, found, form)
        merge = entity_merge(principal=principal, scope=scope, source=source, target=target)
    except MemorywebError as exc:
        form["error"] = exc.message
        return render_page(request, ENTITY, entity_context(request, scope, found, merge=form), fragment="merge", status=exc.status)
    # Outside the merge's transaction: the refresh embeds the rewritten documents after its own commit.
    merge_documents_refresh(merge)
    messages.success(request, f"Merged {source.name} into {target.name}.")
    return redirect_page(request, reverse("entity", args=[scope.slug, target.public_id]))


@page
@require_POST
def entity_merge_undo_view(request: HttpRequest, slug: str, entity: str, merge_id: str) -> HttpResponse:
    """Undo a merge from the page of its source or target, then go to the source's page; a
    refusal (undone already, a later merge stands, rows moved on) is shown in the control."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    found = entity_on_page(scope, entity)
    try:
        merge = entity_merge_undo(principal=principal, scope=scope, merge_id=merge_id)
    except MemorywebError as exc:
        form = {**merge_form({}), "undo_error": exc.message}
        return render_page(request, ENTITY, entity_context(request, scope, found, merge=form), fragment="merge", status=exc.status)
    merge_documents_refresh(merge)
    messages.success(request, f"Undid the merge: {merge.source.name} is its own entity again.")
    return redirect_page(request, reverse("entity", args=[scope.slug, merge.source.public_id]))
