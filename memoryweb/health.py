from django.http import JsonResponse
from django.views.decorators.http import require_GET

from memoryweb.checks import run_checks


@require_GET
def healthz(request):
    """For load balancers and compose healthchecks: 200 when every piece answers, else 503."""
    checks = run_checks(deep=False)
    ok = all(c.ok for c in checks)
    return JsonResponse({"ok": ok, "checks": [c.as_dict() for c in checks]}, status=200 if ok else 503)
