#!/usr/bin/env bash
# Create .venv and install toolclear with everything the app and the tests need.
# Installs only when requirements-dev.txt or pyproject.toml changed since the last
# install, so every launch of the inspector does not re-run pip (and its build banner).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.toolclear-installed
want=$(cat requirements-dev.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  start=$(date +%s)
  if command -v uv >/dev/null 2>&1; then
    echo "setup: installing toolclear and what the app and tests need into .venv with uv (about 30 s)..." >&2
    uv pip install -q --python .venv/bin/python -r requirements-dev.txt
  else
    echo "setup: installing toolclear and what the app and tests need into .venv with pip" \
         "(the first time about 2 to 4 minutes; later runs skip this until requirements change)..." >&2
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
    .venv/bin/python -m pip install -q -r requirements-dev.txt 2>&1 | grep -v "^WARNING: Location" || true
  fi
  echo "setup: done in $(( $(date +%s) - start )) s" >&2
  echo "$want" > "$stamp"
fi
.venv/bin/python -c "import toolclear, streamlit, plotly, pandas, tiktoken, yaml, playwright" \
  || { rm -f "$stamp"; echo "setup: the Python packages did not install" >&2; exit 1; }
