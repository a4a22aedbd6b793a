#!/usr/bin/env bash
# Create .venv (if missing) and install memoryweb into it, one line per step. Run by start.sh and
# test.sh. pip's output goes to var/install.log and is shown only when a step fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
mkdir -p var
LOG=var/install.log
: >"$LOG"

step() {  # step DESCRIPTION COMMAND...: run COMMAND quietly, or show why it failed and stop
  local description=$1
  shift
  echo "==> $description"
  if ! "$@" >>"$LOG" 2>&1; then
    echo "FAILED: $description. The last lines of $LOG:" >&2
    tail -n 40 "$LOG" >&2
    exit 1
  fi
}

if [ ! -x .venv/bin/python ]; then
  step "Creating .venv with $PYTHON" "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
step "Upgrading pip" python -m pip install --upgrade pip
# torch first and pinned: sentence-transformers would otherwise pull a multi-GB CUDA build.
step "Installing PyTorch (CPU build; about 1 GB on the first run)" python -m pip install "torch==2.13.0"
step "Installing memoryweb${MEMORYWEB_EXTRAS:-} and its dependencies" python -m pip install -e ".${MEMORYWEB_EXTRAS:-}"
echo "==> Installed (details in $LOG)"
