"""HTMX pages for the memory core: the scopes list, an entity with its facts and their history
(corrected in place), an episode. Doors only: parse, authorise, call one service, render.

The scope home (search, remember) and forgetting an episode are in retrieval/views.py: they
call retrieval's services."""

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from accounts.permissions import Access, can, team_get, teams_for
from memoryweb.errors import MemorywebError
from memories import selectors
from memories.pages import page, principal_of, redirect_page, render_page
from memories.scopes import scope_create, scope_get, scope_list
from memories.services.extract import episode_get, episode_retry
from memories.services.facts import (
    entity_get, fact_correct, fact_get, fact_history, fact_list, fact_list_for_episode, fact_restore, fact_retract,
    fact_set_importance,
)
from memories.timeline import timelines


@page
@require_http_methods(["GET", "POST"])
def scopes(request: HttpRequest) -> HttpResponse:
    """The scopes the user may see, with their numbers; a team admin creates one here (POST)."""
    principal = principal_of(request)
    form, error, status = {}, None, 200
    if request.method == "POST":
        form = {"slug": request.POST.get("slug", ""), "name": request.POST.get("name", ""), "team": request.POST.get("team", "")}
        try:
            team = team_get(principal, form["team"]) if form["team"] else None
            created = scope_create(principal=principal, slug=form["slug"], name=form["name"].strip(), team=team)
        except MemorywebError as exc:
            error, status = exc.message, exc.status
        else:
            return redirect_page(request, reverse("scope", args=[created.slug]))
    context = {
        "scopes": selectors.scopes_with_counts(scope_list(principal=principal)),
        "admin_teams": teams_for(principal, Access.ADMIN).order_by("slug"),
        "form": form, "error": error,
    }
    return render_page(request, "pages/scopes.html", context, fragment="create", status=status)


def _entity_context(request: HttpRequest, scope, entity, *, error: dict | None = None) -> dict:
    history = list(fact_history(scope=scope, entity_name_or_id=str(entity.public_id)))
    return {
        "scope": scope, "entity": entity,
        "can_write": can(principal_of(request), scope, Access.WRITE),
        "aliases": sorted({alias.alias for alias in entity.aliases.all()} - {entity.name}),
        "facts": fact_list(scope=scope, entity=str(entity.public_id)),
        "history": history,
        "timelines": timelines(history, now=timezone.now()),
        "mentions": selectors.entity_mentions(scope=scope, entity=entity),
        "audit": selectors.audit_for_entity(scope=scope, entity=entity),
        "error": error,
    }


@page
def entity(request: HttpRequest, slug: str, entity: str) -> HttpResponse:
    scope = scope_get(principal_of(request), slug, Access.READ)
    found = entity_get(scope=scope, name_or_id=entity)
    return render_page(request, "pages/entity.html", _entity_context(request, scope, found), fragment="memory")


# What each in-place correction calls, given the form; every service audits.
_FACT_ACTIONS = {
    "correct": lambda scope, fact, post, actor: fact_correct(
        scope=scope, fact_public_id=fact.public_id, value=post.get("value", ""), actor=actor
    ),
    "retract": lambda scope, fact, post, actor: fact_retract(
        scope=scope, fact_public_id=fact.public_id, reason=post.get("reason", "").strip(), actor=actor
    ),
    "restore": lambda scope, fact, post, actor: fact_restore(scope=scope, fact_public_id=fact.public_id, actor=actor),
    "importance": lambda scope, fact, post, actor: fact_set_importance(
        scope=scope, fact_public_id=fact.public_id, importance=post.get("importance", ""), actor=actor
    ),
}


@page
@require_POST
def fact_action(request: HttpRequest, slug: str, fact_id: str, action: str) -> HttpResponse:
    """Correct, retract, restore or re-weigh a fact; answers with the entity's facts, timelines
    and audit trail (the fragment htmx swaps), or the error next to the form that sent it."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    fact = fact_get(scope=scope, fact_public_id=fact_id)
    subject = entity_get(scope=scope, name_or_id=str(fact.subject.public_id))
    try:
        _FACT_ACTIONS[action](scope, fact, request.POST, principal)
    except MemorywebError as exc:
        error, status = {"fact": str(fact.public_id), "action": action, "message": exc.message}, exc.status
    else:
        if not request.htmx:
            return redirect_page(request, reverse("entity", args=[scope.slug, subject.public_id]))
        error, status = None, 200
    return render_page(request, "pages/entity.html", _entity_context(request, scope, subject, error=error),
                       fragment="memory", status=status)


def _episode_context(request: HttpRequest, scope, episode, *, error: str | None = None) -> dict:
    return {
        "scope": scope, "episode": episode,
        "can_write": can(principal_of(request), scope, Access.WRITE),
        "facts": fact_list_for_episode(scope=scope, episode=episode),
        "turns": selectors.turns_around(scope=scope, episode=episode),
        "unfinished": episode.status in selectors.UNFINISHED,
        "error": error,
    }


@page
def episode(request: HttpRequest, slug: str, episode_id: str) -> HttpResponse:
    scope = scope_get(principal_of(request), slug, Access.READ)
    found = episode_get(scope=scope, episode_public_id=episode_id)
    return render_page(request, "pages/episode.html", _episode_context(request, scope, found), fragment="produced")


@page
@require_POST
def episode_retry_view(request: HttpRequest, slug: str, episode_id: str) -> HttpResponse:
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    found = episode_get(scope=scope, episode_public_id=episode_id)
    try:
        found = episode_retry(scope=scope, episode_public_id=found.public_id, actor=principal)
    except MemorywebError as exc:
        error, status = exc.message, exc.status
    else:
        if not request.htmx:
            return redirect_page(request, reverse("episode", args=[scope.slug, found.public_id]))
        error, status = None, 200
    found.refresh_from_db()
    return render_page(request, "pages/episode.html", _episode_context(request, scope, found, error=error),
                       fragment="produced", status=status)
