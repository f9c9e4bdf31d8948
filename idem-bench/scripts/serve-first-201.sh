#!/usr/bin/env bash
# Time from `./idem serve` to the first 201 from POST /payments (BENCHMARKS.md). Run it in a fresh clone for the cold
# figure (the build runs first; Maven's local repository is assumed to hold the dependencies already), and again in
# the same clone for the warm one. Uses a fresh H2 database in a temporary directory; traffic stays on 127.0.0.1.
#
#   idem-bench/scripts/serve-first-201.sh [--port 18090]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
port=18090
[ "${1:-}" = "--port" ] && port="$2"
data="$(mktemp -d)"
start=$(date +%s.%N)
"$root/idem" serve --port "$port" --db "jdbc:h2:file:$data/payments;WRITE_DELAY=0" -- --logging.level.root=WARN \
  >"$data/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$data"' EXIT
deadline=$(( $(date +%s) + 900 ))
while :; do
  status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/payments" \
    -H 'Authorization: Bearer sk_test_alice' -H 'Content-Type: application/json' -H "Idempotency-Key: first-201-$start" \
    -d '{"account_id":"acct_first","amount":100,"currency":"EUR"}' 2>/dev/null || true)
  if [ "$status" = "201" ]; then break; fi
  if ! kill -0 $server 2>/dev/null; then cat "$data/serve.log" >&2; exit 1; fi
  if [ "$(date +%s)" -gt "$deadline" ]; then echo "no 201 within 15 minutes" >&2; exit 1; fi
  sleep 0.1
done
end=$(date +%s.%N)
printf 'serve -> first 201: %.1f s\n' "$(echo "$end - $start" | bc)"
