from django.urls import path, re_path

from retrieval import views

urlpatterns = [
    path("s/<slug:slug>/", views.scope_home, name="scope"),
    path("s/<slug:slug>/episodes/<str:episode_id>/forget", views.episode_forget_view, name="episode_forget"),
    # Merging the entity of the page (by public id) with another, and undoing a merge from its page.
    re_path(r"^s/(?P<slug>[-\w]+)/entities/(?P<entity>[0-9a-f-]{36})/merge$", views.entity_merge_view, name="entity_merge"),
    re_path(
        r"^s/(?P<slug>[-\w]+)/entities/(?P<entity>[0-9a-f-]{36})/merges/(?P<merge_id>[0-9a-f-]{36})/undo$",
        views.entity_merge_undo_view,
        name="entity_merge_undo",
    ),
]
