from django.http import JsonResponse
from django.views.decorators.http import require_GET

from memoryweb.checks import run_checks


@require_GET
def healthz(request):
    """For load balancers and compose healthchecks: 200 when every piece answers, else 503.

    Anyone may ask, so the answer names only the failing checks; hosts, database names, URLs and
    versions help an attacker and are shown only to an active staff user signed in (and in
    `memoryweb config`)."""
    checks = run_checks(deep=False)
    ok = all(c.ok for c in checks)
    body = {"ok": ok, "failing": [c.name for c in checks if not c.ok]}
    user = request.user
    if user.is_authenticated and user.is_active and user.is_staff:
        body["checks"] = [c.as_dict() for c in checks]
    return JsonResponse(body, status=200 if ok else 503)
