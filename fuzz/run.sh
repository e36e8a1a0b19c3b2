#!/usr/bin/env bash
# Fuzz toolclear.load for MINUTES minutes (default 10), restarting after each crash so one
# run collects every crash; crash inputs are kept in fuzz/crashes/.
set -uo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-10}"
end=$(( $(date +%s) + minutes * 60 ))
mkdir -p fuzz/work fuzz/crashes
runs=0
while [ "$(date +%s)" -lt "$end" ]; do
  left=$(( end - $(date +%s) ))
  runs=$((runs + 1))
  .venv/bin/python fuzz/fuzz_load.py -max_total_time="$left" -rss_limit_mb=4096 -timeout=60 \
      -artifact_prefix=fuzz/crashes/ -print_final_stats=1 fuzz/work 2>&1 | tail -n 40 > "fuzz/crashes/run-$runs.log"
done
echo "fuzz: $runs run(s); crash inputs:"; ls fuzz/crashes | grep -v '\.log$' || echo "  none"
