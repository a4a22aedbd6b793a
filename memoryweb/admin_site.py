"""The Django admin is for operators: only active superusers may use it.

Team admins moderate their own teams through the scoped pages, where every lookup goes through
`accounts/permissions.py`. The admin's querysets are not scoped to teams, so a staff user who
is not a superuser is refused at the site's gate, which guards every admin view (index,
changelists, change pages, actions, autocomplete), whatever model permissions they hold.
"""

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig


class OperatorAdminSite(admin.AdminSite):
    site_header = "memoryweb operators"
    site_title = "memoryweb admin"

    def login(self, request, extra_context=None):
        # Failed sign-ins are limited here as on the pages' login (accounts/lockout.py).
        from accounts.views import signin_limited

        return signin_limited(super().login)(request, extra_context)

    def has_permission(self, request) -> bool:
        user = request.user
        return user.is_active and user.is_superuser


class OperatorAdminConfig(AdminConfig):
    """Replaces `django.contrib.admin` in INSTALLED_APPS, so `admin.site` is an OperatorAdminSite."""

    default_site = "memoryweb.admin_site.OperatorAdminSite"
