from django.contrib import admin
from django.urls import include, path

from memoryweb.api import api
from memoryweb.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("api/v1/", api.urls),
    # The HTMX pages: signing in, the scopes, a scope's home, entities, facts, episodes.
    path("", include("accounts.urls")),
    path("", include("memories.urls")),
    path("", include("retrieval.urls")),
]
