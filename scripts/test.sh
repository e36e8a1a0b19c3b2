#!/usr/bin/env bash
# Set everything up and run every test: core, formats, CLI, AppTest and the real-browser e2e tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1
if ! command -v chromium >/dev/null 2>&1 && [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq
    sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "test: Debian's chromium is not installed and cannot be installed without root;" \
         "the browser tests will be skipped (in CI they fail)" >&2
  fi
fi
bash scripts/setup.sh
.venv/bin/ruff check --quiet || { echo "test: ruff check failed" >&2; exit 1; }
.venv/bin/mypy --no-error-summary toolclear || { echo "test: mypy toolclear failed" >&2; exit 1; }
# ship what we test: the sdist and the wheel built from it, installed with [app] in a fresh venv
bash scripts/check_package.sh || { echo "test: the built package does not work" >&2; exit 1; }
rc=0
# two workers (pytest-xdist): the browser tests mostly wait, the core keeps the other core busy
.venv/bin/python -m pytest -q -p no:cacheprovider -n "${TOOLCLEAR_TEST_WORKERS:-2}" --dist worksteal tests "$@" || rc=$?
if [ "$rc" -eq 5 ]; then echo "test: no tests collected" >&2; exit 1; fi
exit "$rc"
