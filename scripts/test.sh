#!/usr/bin/env bash
# Install the test dependencies into .venv and run the whole suite (extra arguments go to pytest).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MEMORYWEB_EXTRAS="[test]" bash scripts/setup.sh
# The suite decides per test whether tasks go through Redis; the ambient REDIS_URL must not.
unset REDIS_URL DATABASE_URL
exec .venv/bin/python -m pytest "$@"
