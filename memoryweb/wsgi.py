import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")

from memoryweb.warmup import native_threads_limit, warm_up_in_background  # noqa: E402

native_threads_limit()  # before anything loads PyTorch (warmup.py says why), as asgi.py does
application = get_wsgi_application()

from retrieval.background import background_start  # noqa: E402 (needs the app above)

warm_up_in_background()
background_start()  # without a broker, extraction and indexing on this process's own threads
