import pytest
from django.conf import settings as django_settings

from tests.replay import replay_server  # noqa: F401  (the fixture, shared with other test folders)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A MEMORYWEB_HOME with no exported graph yet, for this module."""
    saved, django_settings.MEMORYWEB_HOME = django_settings.MEMORYWEB_HOME, tmp_path_factory.mktemp("home")
    yield django_settings.MEMORYWEB_HOME
    django_settings.MEMORYWEB_HOME = saved
