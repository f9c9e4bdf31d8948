#!/usr/bin/env bash
# CPU per request of the reference service and of PostgreSQL (BENCHMARKS.md section 4): runs one scenario of
# PaymentsServiceLoad for one pass against a service already running (./idem serve, as payments-http.sh starts it) and
# divides the CPU ticks the service's JVM and all postgres processes used meanwhile by the requests answered.
# Traffic stays on 127.0.0.1; the postgres figure includes background processes (WAL writer, checkpointer).
#
#   idem-bench/scripts/payments-cpu-per-request.sh SCENARIO [SECONDS] [BASE_URL]
#   SCENARIO: baseline | idem-first | idem-first-attempt | idem-replay; SECONDS default 8; BASE_URL default
#   http://127.0.0.1:18080
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scenario="${1:?usage: payments-cpu-per-request.sh SCENARIO [SECONDS] [BASE_URL]}"
seconds="${2:-8}"
base="${3:-http://127.0.0.1:18080}"
service="$(pgrep -f 'dev.idem.cli.Main serve' | head -n 1 || true)"
[ -n "$service" ] || { echo "no running service (./idem serve) found" >&2; exit 1; }
tick="$(getconf CLK_TCK)"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
postgres_ticks() {
  local sum=0 p
  for p in $(pgrep -u postgres postgres || true); do sum=$((sum + $(ticks "$p"))); done
  echo "$sum"
}
s0="$(ticks "$service")"; p0="$(postgres_ticks)"
report="$(java -cp "$root/idem-bench/target/benchmarks.jar" dev.idem.bench.http.PaymentsServiceLoad --base "$base" \
  --scenarios "$scenario" --seconds "$seconds" --passes 1 --warmup 0 2>/dev/null || true)"
s1="$(ticks "$service")"; p1="$(postgres_ticks)"
row="$(grep -E "^\| 1 \| $scenario " <<<"$report" || true)"
[ -n "$row" ] || { echo "the load printed no pass for $scenario" >&2; exit 1; }
requests="$(awk -F'|' '{gsub(/ /, "", $4); print $4}' <<<"$row")"
rate="$(awk -F'|' '{gsub(/ /, "", $7); print $7}' <<<"$row")"
[ "$requests" -gt 0 ] || { echo "no request answered" >&2; exit 1; }
echo "$scenario: $requests requests, $rate req/s, service $(( (s1 - s0) * 1000000 / tick / requests )) us/request," \
  "postgres $(( (p1 - p0) * 1000000 / tick / requests )) us/request"
