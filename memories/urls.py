from django.urls import path, re_path

from memories import views

urlpatterns = [
    path("", views.scopes, name="scopes"),
    # An entity by public id (the pages' links) or by name, as resolution finds it; a name may hold a "/".
    path("s/<slug:slug>/entities/<path:entity>/", views.entity, name="entity"),
    # The merge control's choices and preview (GET); the merge itself posts to .../merge
    # (retrieval/urls.py: it rewrites search documents).
    re_path(r"^s/(?P<slug>[-\w]+)/entities/(?P<entity>[0-9a-f-]{36})/merge/preview$", views.entity_merge_preview_view,
            name="entity_merge_preview"),
    re_path(
        r"^s/(?P<slug>[-\w]+)/facts/(?P<fact_id>[0-9a-f-]{36})/(?P<action>correct|retract|restore|importance)$",
        views.fact_action,
        name="fact_action",
    ),
    path("s/<slug:slug>/episodes/<str:episode_id>/", views.episode, name="episode"),
    path("s/<slug:slug>/episodes/<str:episode_id>/retry", views.episode_retry_view, name="episode_retry"),
    path("s/<slug:slug>/review/", views.review, name="review"),
    re_path(
        r"^s/(?P<slug>[-\w]+)/review/facts/(?P<fact_id>[0-9a-f-]{36})/(?P<action>approve|reject|correct)$",
        views.review_action,
        name="review_action",
    ),
    path("s/<slug:slug>/review/bulk", views.review_bulk, name="review_bulk"),
    path("s/<slug:slug>/review/episodes/<str:episode_id>/retry", views.review_retry, name="review_retry"),
    path("s/<slug:slug>/review/settings", views.review_settings, name="review_settings"),
]
