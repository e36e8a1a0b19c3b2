#!/usr/bin/env bash
# Ship what we test: build the sdist, the wheel from the sdist, install the wheel with
# [app] into a fresh venv, and use it from a folder outside the checkout: every module
# imports, --version, inspect / reduce / compare / report on a real transcript, sessions
# and advise on a fake home of real Claude Code and Codex logs, and `toolclear app`
# served and rendered in real Chromium. Run by scripts/test.sh (so by CI) after the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK=$(mktemp -d /tmp/toolclear-package.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo "package: building the sdist, then the wheel from it..." >&2
.venv/bin/python -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; exit 1; }
wheel=$(ls "$WORK"/dist/toolclear-*.whl)
python3 -m venv "$WORK/venv"
echo "package: installing $(basename "$wheel")[app] into a fresh venv..." >&2
"$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check "${wheel}[app]" 2>&1 \
  | grep -v "^WARNING: Location" || true
mkdir -p "$WORK/outside"
cp tests/data/corpus/claude_code/entire-cli_cc-2.1.37_large_4c-ff5845d5a2.jsonl "$WORK/outside/session.jsonl"
cp tests/data/corpus/codex_cli/codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl "$WORK/outside/rollout.jsonl"
cp scripts/check_package.py "$WORK/outside/"
# every file the checkout ships: the package's tracked files, and the samples it installs as package data
{ git ls-files toolclear | grep -v '/__pycache__/'; git ls-files sample_data | grep -E '\.jsonl?$' \
    | sed 's|^sample_data/|toolclear/inspector/samples/|'; } > "$WORK/outside/shipped.txt"
cd "$WORK/outside"
PATH="$WORK/venv/bin:$PATH" "$WORK/venv/bin/python" check_package.py "$ROOT/.venv/bin/python" "$ROOT/scripts/render_check.py"
echo "package: the built wheel works from outside the checkout" >&2
