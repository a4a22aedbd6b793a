import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")

from memoryweb.warmup import native_threads_limit, warm_up_in_background  # noqa: E402

native_threads_limit()  # before anything loads PyTorch (warmup.py says why), as asgi.py does
application = get_wsgi_application()

warm_up_in_background()
