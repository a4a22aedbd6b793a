from django.urls import path, re_path

from memories import views

urlpatterns = [
    path("", views.scopes, name="scopes"),
    # An entity by public id (the pages' links) or by name, as resolution finds it; a name may hold a "/".
    path("s/<slug:slug>/entities/<path:entity>/", views.entity, name="entity"),
    re_path(
        r"^s/(?P<slug>[-\w]+)/facts/(?P<fact_id>[0-9a-f-]{36})/(?P<action>correct|retract|restore|importance)$",
        views.fact_action,
        name="fact_action",
    ),
    path("s/<slug:slug>/episodes/<str:episode_id>/", views.episode, name="episode"),
    path("s/<slug:slug>/episodes/<str:episode_id>/retry", views.episode_retry_view, name="episode_retry"),
]
