"""Typed helpers that read settings from the environment and fail loudly on a bad value."""

import os
import re

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
# A rate limit: requests per second, minute, hour or day (memoryweb/throttle.py reads it).
RATE = re.compile(r"([1-9][0-9]*)/(s|sec|m|min|h|hour|d|day)")


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}.")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}.")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}.") from None
    if minimum is not None and not value >= minimum:  # NaN too
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {raw!r}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_rate(name: str, default: str) -> str:
    value = env_str(name, default)
    if not RATE.fullmatch(value):
        raise ImproperlyConfigured(f"{name} must look like 600/m (per s, m, h or d), not {value!r}.")
    return value


def env_choice(name: str, default: str, choices: set[str]) -> str:
    value = env_str(name, default).lower() or default
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(sorted(choices))}, not {value!r}.")
    return value


def require_ascending(*values: tuple[str, int]) -> None:
    """Raise ImproperlyConfigured unless the named values strictly increase, naming the first
    pair out of order."""
    for (low_name, low), (high_name, high) in zip(values, values[1:]):
        if not low < high:
            raise ImproperlyConfigured(
                f"{low_name} ({low}) must be smaller than {high_name} ({high}); the time limits go "
                f"{' < '.join(name for name, _ in values)}."
            )
