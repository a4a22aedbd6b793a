"""Signing in and out and changing one's password, for the pages (the admin has its own login)."""

from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(template_name="pages/login.html", redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "password/",
        auth_views.PasswordChangeView.as_view(template_name="pages/password.html", success_url=reverse_lazy("password_change_done")),
        name="password_change",
    ),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(template_name="pages/password_done.html"), name="password_change_done"),
]
