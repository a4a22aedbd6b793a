#!/usr/bin/env bash
# Create .venv (if missing) and install memoryweb into it. Sourced by start.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
# torch first and pinned: sentence-transformers would otherwise pull a multi-GB CUDA build.
python -m pip install --quiet "torch==2.13.0"
python -m pip install --quiet -e ".${MEMORYWEB_EXTRAS:-}"
