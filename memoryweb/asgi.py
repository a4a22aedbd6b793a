import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
application = get_asgi_application()

from memoryweb.warmup import warm_up_in_background  # noqa: E402 (needs the settings above)

warm_up_in_background()
