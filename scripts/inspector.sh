#!/usr/bin/env bash
# Set everything up and open the inspector on the bundled sample (http://localhost:8501).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m streamlit run app.py --server.address "${TOOLCLEAR_ADDRESS:-localhost}" "$@"
