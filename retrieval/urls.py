from django.urls import path

from retrieval import views

urlpatterns = [
    path("s/<slug:slug>/", views.scope_home, name="scope"),
    path("s/<slug:slug>/episodes/<str:episode_id>/forget", views.episode_forget_view, name="episode_forget"),
]
