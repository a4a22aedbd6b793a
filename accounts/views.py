"""The team page: members and roles for every member to see; for the team's admins, changing
members, API tokens (the secret shown once) and the audit trail of the team's scopes. Doors
only: the membership and token services check and audit (see memories/views.py)."""

import functools
from datetime import UTC, date, datetime, time
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts import selectors
from accounts.lockout import Locked, request_address, signin_check, signin_failed, signin_succeeded
from accounts.models import Role, Team, User
from accounts.permissions import Principal, is_team_admin, team_get
from accounts.services import membership_add, membership_remove, membership_set_role
from accounts.tokens import token_issue, token_revoke
from memoryweb.errors import Forbidden, InvalidInput, MemorywebError, NotFound
from memories.pages import page, principal_of, redirect_page, render_page

TEMPLATE = "pages/team.html"
LOCKOUT_TEMPLATE = "429.html"
AUDIT_PAGE = 25
# The fragments of the team page htmx asks for, by the id of the element it targets.
_FRAGMENTS = {"members": "members", "tokens": "tokens", "audit": "audit"}


def lockout_response(request: HttpRequest, locked: Locked) -> HttpResponse:
    """The page saying how long to wait: 429, with Retry-After."""
    response = render(request, LOCKOUT_TEMPLATE, {"message": locked.message}, status=429)
    response["Retry-After"] = str(locked.retry_after)
    return response


def signin_limited(view):
    """A login view (the pages', the admin's) with the failed sign-ins limited (accounts/lockout.py):
    a locked account or address gets the lockout page before its password is checked, a failure is
    counted, a success clears the count."""

    @functools.wraps(view)
    def limited(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method != "POST":
            return view(request, *args, **kwargs)
        username, address = request.POST.get("username", ""), request_address(request)
        try:
            signin_check(username=username, address=address)
        except Locked as locked:
            return lockout_response(request, locked)
        response = view(request, *args, **kwargs)
        if request.user.is_authenticated and response.status_code == 302:
            # Signed in now (or already: LoginView sends a signed-in user on without a form).
            signin_succeeded(username=request.user.get_username(), address=address)
        elif response.status_code == 200 and username and request.POST.get("password"):  # the form again: wrong credentials
            locked = signin_failed(username=username, address=address)
            if locked is not None:
                return lockout_response(request, locked)
        return response

    return limited


def _audit_context(request: HttpRequest, team: Team) -> dict:
    filters = {name: request.GET.get(name, "").strip() for name in ("action", "actor", "scope")}
    events = Paginator(selectors.team_audit(team=team, **filters), AUDIT_PAGE).get_page(request.GET.get("page"))
    query = urlencode({name: value for name, value in filters.items() if value})
    return {"audit": events, "filters": filters, "filter_query": query, "actions": selectors.team_audit_actions(team=team)}


def _team_context(request: HttpRequest, team: Team, **extra) -> dict:
    admin = is_team_admin(request.user, team)
    context = {
        "team": team, "is_admin": admin, "roles": Role.values,
        "members": selectors.team_members(team=team),
        "member_error": None, "token_error": None, "member_form": {}, "token_form": {},
    }
    if admin:
        context.update(tokens=selectors.team_tokens(team=team), scopes=team.scopes.order_by("slug"), **_audit_context(request, team))
    return {**context, **extra}


def _admin_team(request: HttpRequest, slug: str) -> tuple[Principal, Team]:
    """The team, for one of its admins: another team is a 404, a member who is not admin a 403."""
    principal = principal_of(request)
    team = team_get(principal, slug)
    if not is_team_admin(request.user, team):
        raise Forbidden(f"Only admins of team {team.slug!r} can change it.")
    return principal, team


@page
def team(request: HttpRequest, slug: str) -> HttpResponse:
    found = team_get(principal_of(request), slug)
    fragment = _FRAGMENTS.get(request.htmx.target) if request.htmx else None
    if fragment in ("tokens", "audit") and not is_team_admin(request.user, found):
        raise Forbidden(f"Only admins of team {found.slug!r} see its tokens and audit trail.")
    return render_page(request, TEMPLATE, _team_context(request, found), fragment=fragment)


def _member_user(username: str) -> User:
    user = User.objects.filter(username__iexact=(username or "").strip()).first()
    if user is None:
        raise InvalidInput(f"No user named {username.strip()!r}." if username.strip() else "Give a user name.")
    return user


def _members_answer(request: HttpRequest, team: Team, *, error: str | None = None, form: dict | None = None,
                    status: int = 200) -> HttpResponse:
    if not request.htmx and error is None:
        return redirect_page(request, reverse("team", args=[team.slug]))
    context = _team_context(request, team, member_error=error, member_form=form or {})
    return render_page(request, TEMPLATE, context, fragment="members", status=status)


@page
@require_POST
def member_add(request: HttpRequest, slug: str) -> HttpResponse:
    principal, found = _admin_team(request, slug)
    form = {"username": request.POST.get("username", ""), "role": request.POST.get("role", Role.VIEWER)}
    try:
        membership_add(actor=principal, team=found, user=_member_user(form["username"]), role=form["role"])
    except MemorywebError as exc:
        return _members_answer(request, found, error=exc.message, form=form, status=exc.status)
    return _members_answer(request, found)


@page
@require_POST
def member_change(request: HttpRequest, slug: str, username: str, action: str) -> HttpResponse:
    """Change a member's role, or remove them (never the last admin: the service refuses)."""
    principal, found = _admin_team(request, slug)
    membership = selectors.team_members(team=found).filter(user__username=username).first()
    if membership is None:
        raise NotFound(f"{username} is not a member of team {found.slug!r}.")
    try:
        if action == "role":
            membership_set_role(actor=principal, team=found, user=membership.user, role=request.POST.get("role", ""))
        else:
            membership_remove(actor=principal, team=found, user=membership.user)
    except MemorywebError as exc:
        return _members_answer(request, found, error=exc.message, status=exc.status)
    return _members_answer(request, found)


def _expiry(raw: str) -> datetime | None:
    """A token's expiry from the form's date: the end of that day, UTC."""
    if not raw:
        return None
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        raise InvalidInput("The expiry is a date like 2026-12-31.") from None
    return datetime.combine(day, time.max, tzinfo=UTC)


@page
@require_POST
def token_create(request: HttpRequest, slug: str) -> HttpResponse:
    """Issue a token for a member, limited to some of the team's scopes; the answer shows its
    secret, once (it is not stored, so no later page can show it)."""
    principal, found = _admin_team(request, slug)
    form = {
        "name": request.POST.get("name", ""), "user": request.POST.get("user", "") or request.user.username,
        "scopes": request.POST.getlist("scope"), "can_write": request.POST.get("can_write") == "on",
        "expires": request.POST.get("expires", "").strip(),
    }
    try:
        member = selectors.team_members(team=found).filter(user__username=form["user"]).first()
        if member is None:
            raise InvalidInput(f"{form['user']} is not a member of team {found.slug!r}.")
        issued = token_issue(
            actor=principal, user=member.user, name=form["name"], scopes=list(found.scopes.filter(slug__in=form["scopes"])),
            can_write=form["can_write"], expires_at=_expiry(form["expires"]),
        )
    except MemorywebError as exc:
        context = _team_context(request, found, token_error=exc.message, token_form=form)
        return render_page(request, TEMPLATE, context, fragment="tokens", status=exc.status)
    # The secret exists only in this answer: rendered here (the whole page without htmx), never redirected to.
    return render_page(request, TEMPLATE, _team_context(request, found, issued=issued), fragment="tokens")


@page
@require_POST
def token_revoke_view(request: HttpRequest, slug: str, prefix: str) -> HttpResponse:
    principal, found = _admin_team(request, slug)
    token = selectors.team_tokens(team=found).filter(prefix=prefix).first()
    if token is None:
        raise NotFound(f"No token with prefix {prefix!r}.")
    token_revoke(token=token, actor=principal)
    if not request.htmx:
        return redirect_page(request, reverse("team", args=[found.slug]))
    return render_page(request, TEMPLATE, _team_context(request, found), fragment="tokens")
