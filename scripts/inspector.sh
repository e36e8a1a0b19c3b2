#!/usr/bin/env bash
# Open the inspector on the bundled sample: http://localhost:8501 (TOOLCLEAR_PORT to change it).
# Installs only what the app needs (toolclear[app]) into .venv-app, once; the development
# stack (pytest, Playwright, the reference frameworks, Dask) is for scripts/test.sh only.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=.venv-app
stamp="$VENV/.toolclear-installed"
want=$(cat pyproject.toml setup.py $(find toolclear sample_data -type f \( -name '*.py' -o -name '*.json' -o -name '*.jsonl' \) | sort) \
       | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  start=$(date +%s)
  [ -x "$VENV/bin/python" ] || { echo "inspector: creating $VENV..." >&2; "$PYTHON" -m venv "$VENV"; }
  echo "inspector: installing toolclear[app] (Streamlit, pandas, plotly, tiktoken) into $VENV;" \
       "the first time about 30 s..." >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check ".[app]" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  "$VENV/bin/python" -c "import toolclear, streamlit" 2>/dev/null \
    || { echo "inspector: the install failed; see the messages above" >&2; exit 1; }
  echo "$want" > "$stamp"
  echo "inspector: installed in $(( $(date +%s) - start )) s" >&2
fi
port="${TOOLCLEAR_PORT:-8501}"
address="${TOOLCLEAR_ADDRESS:-localhost}"
echo "inspector: open http://$address:$port in your browser (Ctrl-C stops it)" >&2
exec "$VENV/bin/python" -m streamlit run app.py --server.port "$port" --server.address "$address" "$@"
