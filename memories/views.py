"""HTMX pages for the memory core: the scopes list, an entity with its facts and their history
(corrected in place) and the preview of a merge, an episode, the review queue. Doors only:
parse, authorise, call one service, render.

The scope home (search, remember), forgetting an episode, and merging entities (and undoing a
merge) are in retrieval/views.py: they call retrieval's services (a merge rewrites the moved
facts' search documents)."""

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from accounts.permissions import Access, can, is_team_admin, team_get, teams_for
from memoryweb.errors import InvalidInput, MemorywebError, NotFound
from memories import selectors
from memories.pages import page, principal_of, redirect_page, render_page
from memories.scopes import scope_create, scope_get, scope_list, scope_update
from memories.models import Entity, Scope
from memories.services.extract import episode_get, episode_retry
from memories.services.facts import (
    entity_get, entity_list, fact_correct, fact_get, fact_history, fact_list, fact_list_for_episode, fact_restore, fact_retract,
    fact_set_importance,
)
from memories.services.merge import entity_merge_preview
from memories.services.review import fact_approve, fact_reject, fact_review_correct, facts_approve, facts_reject, review_queue
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


ENTITY = "pages/entity.html"
# The fragments of the entity page htmx asks for, by the id of the element it targets.
_ENTITY_FRAGMENTS = {"memory": "memory", "merge": "merge", "merge-choices": "merge_choices"}
MERGE_CHOICES = 100  # entities listed to merge with; the search box narrows them


def entity_context(request: HttpRequest, scope: Scope, entity: Entity, *, error: dict | None = None,
                   merge: dict | None = None) -> dict:
    """The entity page's context. A merged entity's page shows what it was merged into instead
    of facts (they moved there); `merge` is the merge control's state (see `merge_form`)."""
    can_write = can(principal_of(request), scope, Access.WRITE)
    merged = entity.merged_into_id is not None
    history = [] if merged else list(fact_history(scope=scope, entity_name_or_id=str(entity.public_id)))
    merge = merge or merge_form({})
    return {
        "scope": scope, "entity": entity,
        "can_write": can_write,
        "aliases": sorted({alias.alias for alias in entity.aliases.all()} - {entity.name}),
        "facts": [] if merged else fact_list(scope=scope, entity=str(entity.public_id)),
        "history": history,
        "timelines": timelines(history, now=timezone.now()),
        "mentions": [] if merged else selectors.entity_mentions(scope=scope, entity=entity),
        "audit": selectors.audit_for_entity(scope=scope, entity=entity),
        "merges": selectors.merges_standing(scope=scope, entity=entity),
        # Read only when the control is shown (an editor's page of an entity not merged).
        "merge_choices": lambda: list(entity_list(scope=scope, query=merge["q"]).exclude(pk=entity.pk)[:MERGE_CHOICES]),
        "merge": merge,
        "error": error,
    }


def merge_form(data) -> dict:
    """The merge control's fields: `other` (the other entity's public id), `direction` ("into":
    this entity merges into the other; "from": the other merges into this one), `q` (the search
    narrowing the choices)."""
    direction = data.get("direction", "into")
    return {
        "other": data.get("other", "").strip(), "direction": "from" if direction == "from" else "into",
        "q": data.get("q", "").strip(), "preview": None, "error": None,
    }


def merge_pair(scope: Scope, entity: Entity, form: dict) -> tuple[Entity, Entity]:
    """(source, target) from the page's entity and the merge control's fields."""
    if not form["other"]:
        raise InvalidInput("Choose the entity to merge with.")
    other = selectors.entity_stored(scope=scope, public_id=form["other"])
    if other is None:
        raise NotFound(f"No entity {form['other']} in scope {scope.slug!r}.")
    return (other, entity) if form["direction"] == "from" else (entity, other)


def entity_on_page(scope: Scope, name_or_id: str) -> Entity:
    """The entity an entity URL names: by public id the row itself (a merged one shows as
    merged), by name what resolution finds."""
    return selectors.entity_stored(scope=scope, public_id=name_or_id) or entity_get(scope=scope, name_or_id=name_or_id)


@page
def entity(request: HttpRequest, slug: str, entity: str) -> HttpResponse:
    scope = scope_get(principal_of(request), slug, Access.READ)
    found = entity_on_page(scope, entity)
    fragment = _ENTITY_FRAGMENTS.get(request.htmx.target, "memory") if request.htmx else None
    return render_page(request, ENTITY, entity_context(request, scope, found), fragment=fragment)


@page
def entity_merge_preview_view(request: HttpRequest, slug: str, entity: str) -> HttpResponse:
    """The merge control (editors): the entities to choose from (htmx, aimed at
    #merge-choices, as the search box is typed in), or what merging the chosen pair would move.
    Writes nothing; confirming posts to `entity_merge` (retrieval/views.py)."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    found = entity_on_page(scope, entity)
    form, status = merge_form(request.GET), 200
    if request.htmx and request.htmx.target == "merge-choices":
        return render_page(request, ENTITY, entity_context(request, scope, found, merge=form), fragment="merge_choices")
    if "find" not in request.GET:  # "Find" (without JavaScript) only narrows the choices
        try:
            source, target = merge_pair(scope, found, form)
            form["preview"] = entity_merge_preview(principal=principal, scope=scope, source=source, target=target)
        except MemorywebError as exc:
            form["error"], status = exc.message, exc.status
    return render_page(request, ENTITY, entity_context(request, scope, found, merge=form), fragment="merge", status=status)


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
    return render_page(request, ENTITY, entity_context(request, scope, subject, error=error),
                       fragment="memory", status=status)


def _episode_context(request: HttpRequest, scope, episode, *, error: str | None = None) -> dict:
    return {
        "scope": scope, "episode": episode,
        "can_write": can(principal_of(request), scope, Access.WRITE),
        "facts": fact_list_for_episode(scope=scope, episode=episode, include_held=True),
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


REVIEW = "pages/review.html"
# The fragments of the review page htmx asks for, by the id of the element it targets.
_REVIEW_FRAGMENTS = {"queue": "queue", "failed": "failed", "review-settings": "settings"}


def _review_context(request: HttpRequest, scope, **extra) -> dict:
    principal = principal_of(request)
    return {
        "scope": scope,
        "can_write": can(principal, scope, Access.WRITE),
        "can_admin": is_team_admin(request.user, scope.team),
        "facts": list(review_queue(principal=principal, scope=scope)),
        "failed": selectors.episodes_failed(scope=scope),
        "error": None, "done": "", "settings_error": None,
        **extra,
    }


@page
def review(request: HttpRequest, slug: str) -> HttpResponse:
    """The facts waiting for a person, and the episodes whose extraction failed."""
    scope = scope_get(principal_of(request), slug, Access.READ)
    fragment = _REVIEW_FRAGMENTS.get(request.htmx.target) if request.htmx else None
    return render_page(request, REVIEW, _review_context(request, scope), fragment=fragment)


# What each review decision calls, given the form; every service audits.
_REVIEW_ACTIONS = {
    "approve": (lambda scope, fact_id, post, principal: fact_approve(principal=principal, scope=scope, fact_public_id=fact_id), "Approved"),
    "reject": (lambda scope, fact_id, post, principal: fact_reject(principal=principal, scope=scope, fact_public_id=fact_id), "Rejected"),
    "correct": (lambda scope, fact_id, post, principal: fact_review_correct(
        principal=principal, scope=scope, fact_public_id=fact_id, value=post.get("value", "")), "Corrected and approved"),
}
_BULK_ACTIONS = {"approve": (facts_approve, "Approved"), "reject": (facts_reject, "Rejected")}


def _review_answer(request: HttpRequest, scope, *, error: dict | None = None, done: str = "", status: int = 200) -> HttpResponse:
    if not request.htmx and error is None:
        return redirect_page(request, reverse("review", args=[scope.slug]))
    context = _review_context(request, scope, error=error, done=done)
    if error is not None and error["fact"] not in {str(f.public_id) for f in context["facts"]}:
        error["fact"] = "queue"  # about a fact no longer listed (decided meanwhile): shown above the list
    return render_page(request, REVIEW, context, fragment="queue", status=status)


@page
@require_POST
def review_action(request: HttpRequest, slug: str, fact_id: str, action: str) -> HttpResponse:
    """Approve, reject or correct one waiting fact; answers with the queue (the fragment htmx
    swaps), or the error next to the fact."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    decide, verb = _REVIEW_ACTIONS[action]
    try:
        fact = decide(scope, fact_id, request.POST, principal)
    except MemorywebError as exc:
        if exc.status == 404:
            raise
        return _review_answer(request, scope, error={"fact": fact_id, "message": exc.message}, status=exc.status)
    return _review_answer(request, scope, done=f"{verb}: {fact.subject.name} {fact.attribute} {fact.value}.")


@page
@require_POST
def review_bulk(request: HttpRequest, slug: str) -> HttpResponse:
    """Approve or reject the checked facts at once."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    chosen = _BULK_ACTIONS.get(request.POST.get("action", ""))
    if chosen is None:
        return _review_answer(request, scope, error={"fact": "queue", "message": "Choose approve or reject."}, status=422)
    decide, verb = chosen
    try:
        decided = decide(principal=principal, scope=scope, fact_public_ids=request.POST.getlist("fact"))
    except MemorywebError as exc:
        if exc.status == 404:
            raise
        return _review_answer(request, scope, error={"fact": "queue", "message": exc.message}, status=exc.status)
    return _review_answer(request, scope, done=f"{verb} {len(decided)} fact{'s' if len(decided) != 1 else ''}.")


@page
@require_POST
def review_retry(request: HttpRequest, slug: str, episode_id: str) -> HttpResponse:
    """Retry a failed episode from the review page; answers with the failed list."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.WRITE)
    try:
        retried = episode_retry(scope=scope, episode_public_id=episode_id, actor=principal)
    except MemorywebError as exc:
        if exc.status == 404:
            raise
        context = _review_context(request, scope, retry_error={"episode": episode_id, "message": exc.message})
        return render_page(request, REVIEW, context, fragment="failed", status=exc.status)
    if not request.htmx:
        return redirect_page(request, reverse("review", args=[scope.slug]))
    return render_page(request, REVIEW, _review_context(request, scope, retried=retried), fragment="failed")


@page
@require_POST
def review_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """A team admin sets the scope's review threshold and "review before recall"."""
    principal = principal_of(request)
    scope = scope_get(principal, slug, Access.READ)
    raw = request.POST.get("review_threshold", "").strip()
    try:
        threshold = float(raw) if raw else 0.0
    except ValueError:
        threshold = raw  # scope_update refuses it with its own message
    try:
        scope = scope_update(principal=principal, scope=scope, review_threshold=threshold,
                             review_before_recall=request.POST.get("review_before_recall") == "on")
    except MemorywebError as exc:
        if exc.status in (403, 404):
            raise
        context = _review_context(request, scope, settings_error=exc.message, settings_form={"review_threshold": raw})
        return render_page(request, REVIEW, context, fragment="settings", status=exc.status)
    if not request.htmx:
        return redirect_page(request, reverse("review", args=[scope.slug]))
    return render_page(request, REVIEW, _review_context(request, scope, settings_saved=True), fragment="settings")
