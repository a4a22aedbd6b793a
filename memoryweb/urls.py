from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView

from memoryweb.api import api
from memoryweb.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("api/v1/", api.urls),
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
]
