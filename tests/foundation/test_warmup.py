"""A server process loads the embedder and dateparser in the background when it starts."""

import subprocess
import sys

from memoryweb import warmup
from memoryweb.providers import embedders


def test_warm_up_builds_the_embedder_and_loads_dateparser_in_a_fresh_process():
    code = (
        "import sys, django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'memoryweb.settings'); django.setup();"
        "from memoryweb.providers import embedders;"
        "assert embedders._build.cache_info().currsize == 0 and 'dateparser.search' not in sys.modules;"
        "from memoryweb.warmup import warm_up_in_background; warm_up_in_background().join(120);"
        "assert embedders._build.cache_info().currsize == 1, 'embedder not built';"
        "assert 'dateparser.search' in sys.modules, 'dateparser not loaded'; print('warm')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                            env={**__import__("os").environ, "EMBEDDER": "hash", "LLM_PROVIDER": "offline"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "warm"


def test_a_failing_embedder_is_logged_not_raised(monkeypatch, caplog):
    def broken():
        raise ConnectionError("ollama is not running")

    monkeypatch.setattr(embedders, "get_embedder", broken)
    warmup.warm_up()
    assert "warm-up failed (ConnectionError: ollama is not running)" in caplog.text


def test_it_can_be_switched_off(settings):
    settings.MEMORYWEB_WARM_UP = False
    assert warmup.warm_up_in_background() is None


def test_the_asgi_application_starts_the_warm_up(monkeypatch):
    started = []
    monkeypatch.setattr(warmup, "warm_up_in_background", lambda: started.append(True))
    sys.modules.pop("memoryweb.asgi", None)
    import memoryweb.asgi  # noqa: F401

    assert started == [True]


def _torch_threads_after_importing_the_asgi_app(**env) -> str:
    """PyTorch's thread count in a fresh server process, on its main thread and on another one
    (the embedder encodes on a thread of its own: OpenMP's count is per calling thread)."""
    code = (
        "import memoryweb.asgi, torch; from concurrent.futures import ThreadPoolExecutor;"
        "print(torch.get_num_threads(), ThreadPoolExecutor(1).submit(torch.get_num_threads).result())"
    )
    clean = {k: v for k, v in __import__("os").environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                            env={**clean, "EMBEDDER": "hash", "LLM_PROVIDER": "offline", "MEMORYWEB_WARM_UP": "false", **env})
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def test_a_server_process_limits_pytorch_to_one_thread_on_every_thread():
    assert _torch_threads_after_importing_the_asgi_app() == "1 1"


def test_a_thread_count_chosen_in_the_environment_wins():
    assert _torch_threads_after_importing_the_asgi_app(OMP_NUM_THREADS="2") == "2 2"
