"""Signing in and out and changing one's password, for the pages (the admin has its own login),
and the team page."""

from django.contrib.auth import views as auth_views
from django.urls import path, re_path, reverse_lazy

from accounts import views

urlpatterns = [
    path(
        "login/",
        views.signin_limited(auth_views.LoginView.as_view(template_name="pages/login.html", redirect_authenticated_user=True)),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "password/",
        auth_views.PasswordChangeView.as_view(template_name="pages/password.html", success_url=reverse_lazy("password_change_done")),
        name="password_change",
    ),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(template_name="pages/password_done.html"), name="password_change_done"),
    path("teams/<slug:slug>/", views.team, name="team"),
    path("teams/<slug:slug>/members/add", views.member_add, name="member_add"),
    re_path(r"^teams/(?P<slug>[-\w]+)/members/(?P<username>[^/]+)/(?P<action>role|remove)$", views.member_change, name="member_change"),
    path("teams/<slug:slug>/tokens/new", views.token_create, name="token_create"),
    path("teams/<slug:slug>/tokens/<str:prefix>/revoke", views.token_revoke_view, name="token_revoke"),
]
