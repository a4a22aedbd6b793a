"""The `memoryweb` console script: Django's management commands with memoryweb's settings.

Configuration errors (a malformed DATABASE_URL, a missing SECRET_KEY, an embedded database that
cannot start) are printed as one sentence, not a traceback.
"""

import os
import sys


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    argv = list(sys.argv if argv is None else argv)
    argv[0] = "memoryweb"
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(argv)
    except ImproperlyConfigured as exc:
        print(f"memoryweb: configuration error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
