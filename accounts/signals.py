"""Users are created by doors we do not own (createsuperuser, the Django admin), so the
personal team is ensured on save rather than only in `user_create`."""

from django.db.models.signals import post_save
from django.dispatch import receiver

from accounts.models import User


@receiver(post_save, sender=User, dispatch_uid="accounts_personal_team")
def ensure_personal_team(sender, instance: User, created: bool, raw: bool = False, **kwargs) -> None:
    if created and not raw:
        from accounts.services import personal_team_ensure

        personal_team_ensure(user=instance)
