"""What every HTMX page door shares: who acts, rendering a page or one of its fragments, and
domain errors turned into an HTTP status with the message on the page (never a 500).

A fragment is a `{% partialdef %}` of the page's own template (django-template-partials), so
the page and its htmx swaps are one template and one view."""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django_htmx.http import HttpResponseClientRedirect

from accounts.permissions import Access, Principal, teams_for
from memoryweb.errors import MemorywebError
from memories.scopes import scope_list


def principal_of(request: HttpRequest) -> Principal:
    return Principal(user=request.user)


def render_page(request: HttpRequest, template: str, context: dict, *, fragment: str | None = None, status: int = 200) -> HttpResponse:
    """The whole page, or only `fragment` of it when htmx asked (the page's own template either way)."""
    name = f"{template}#{fragment}" if fragment and request.htmx else template
    return render(request, name, context, status=status)


def redirect_page(request: HttpRequest, url: str) -> HttpResponse:
    """Go to `url`: htmx follows HX-Redirect with a full page load, a plain form post a 302."""
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _login_first(request: HttpRequest) -> HttpResponse:
    """Anonymous → the login page, then back. An htmx swap (a session that expired while the page
    was open) must not put the login form inside a fragment: the whole window goes to the login
    page, coming back to the page the person was on."""
    if request.htmx:
        back = request.htmx.current_url_abs_path or "/"
        return HttpResponseClientRedirect(redirect_to_login(back).url)
    return redirect_to_login(request.get_full_path())


def page(view):
    """A page door: login required (anonymous → the login page), and a domain error the view
    did not handle (NotFound, Forbidden, …) becomes a page with its status (or, for htmx, the message as a fragment it swaps).
    Views catch the errors a person can fix (bad input, conflicts) themselves, to show them
    next to the field."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return _login_first(request)
        try:
            return view(request, *args, **kwargs)
        except MemorywebError as exc:
            return render_page(request, "pages/error.html", {"message": exc.message, "status": exc.status},
                               fragment="message", status=exc.status)

    return wrapped


def header(request: HttpRequest) -> dict:
    """The header's scope switcher and team links: the scopes the signed-in user may see and the
    teams they administer, read only when a template shows them (the admin's pages render with
    this context too)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    principal = Principal(user=user)
    return {
        "header_scopes": lambda: list(scope_list(principal=principal)),
        "header_teams": lambda: list(teams_for(principal, Access.ADMIN).order_by("slug")),
    }
