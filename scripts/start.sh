#!/usr/bin/env bash
# Install everything into .venv and start memoryweb at http://127.0.0.1:8000 on the embedded defaults.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
echo "==> Starting PostgreSQL, migrating and serving (Ctrl-C stops)"
exec .venv/bin/memoryweb serve "$@"
