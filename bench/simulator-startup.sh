#!/usr/bin/env bash
# Time from launching `npx bulk-extract simulate --events N` to curl receiving a full page (HTTP 200),
# as a user rehearsing an export sees it. Usage: bash bench/simulator-startup.sh [EVENTS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-1000000}
runs=${2:-3}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for run in $(seq "$runs"); do
  : >"$out"
  start=$(date +%s%N)
  npx --no-install bulk-extract simulate --events "$events" >"$out" 2>/dev/null &
  npx_pid=$!
  until [ -s "$out" ]; do sleep 0.01; done
  base=$(sed -E 's/.*"baseUrl":"([^"]+)".*/\1/' "$out")
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'api-key: demo-api-key' "$base/events?limit=1000")
  end=$(date +%s%N)
  echo "run $run: events=$events status=$code ms=$(((end - start) / 1000000))"
  kill -TERM "$(sed -E 's/.*"pid":([0-9]+).*/\1/' "$out")"
  wait "$npx_pid" || true
done
