import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
application = get_wsgi_application()

from memoryweb.warmup import warm_up_in_background  # noqa: E402 (needs the settings above)

warm_up_in_background()
