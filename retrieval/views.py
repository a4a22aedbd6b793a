"""HTMX pages that call retrieval's services: a scope's home (live search, remembering, the
recent episodes) and forgetting an episode. Doors only (see memories/views.py)."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from accounts.permissions import Access, can
from memoryweb.errors import MemorywebError
from memories import selectors
from memories.pages import page, principal_of, redirect_page, render_page
from memories.scopes import scope_get
from memories.services.extract import episode_get
from memories.services.facts import entity_list
from memories.services.ingest import remember
from memories.services.review import review_queue
from retrieval.services import episode_forget, recall_evidence

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
