#!/usr/bin/env bash
# Create .venv and install toolclear with everything the app and the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q -r requirements-dev.txt 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import toolclear, streamlit, plotly, pandas, tiktoken, yaml, playwright" \
  || { echo "setup: the Python packages did not install" >&2; exit 1; }
