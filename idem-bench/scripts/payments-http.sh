#!/usr/bin/env bash
# The reference service benchmark (BENCHMARKS.md): starts the payments service on PostgreSQL with the baseline route,
# drives POST /baseline/payments, POST /payments (first executions) and POST /payments (replays) side by side at a
# fixed concurrency, prints the report, and stops the service. Traffic stays on 127.0.0.1.
#
#   idem-bench/scripts/payments-http.sh [--db JDBC_URL] [--port 18080] [--set name=value]... [--no-build]
#     [LOAD_FLAGS...]
#   --set        one more property for the service (repeatable), e.g. --set idem.logging.mdc.enabled=false
#   --no-build   skip the Maven build of idem-bench (a caller that built it already: payments-http-filters.sh)
#   LOAD_FLAGS: --concurrency 16 --seconds 10 --passes 6 --warmup 5 --json out.json
#               --scenarios baseline,idem-first,idem-first-attempt,idem-replay
#   IDEM_JAVA_OPTS (environment) reaches the service's JVM, e.g. -XX:StartFlightRecording=filename=x.jfr
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
db="jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
port=18080
load=()
props=()
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --set) props+=("--$2"); shift 2 ;;
    --no-build) build=0; shift ;;
    *) load+=("$1"); shift ;;
  esac
done

if [ "$build" = 1 ]; then
  mvn -q -B -f "$root/pom.xml" -pl idem-bench -am -Dmaven.test.skip=true package >&2
fi
"$root/idem" --help >/dev/null   # builds the service if needed

log="$(mktemp)"
"$root/idem" serve --port "$port" --db "$db" -- --payments.baseline-route.enabled=true \
  --logging.level.root=WARN --idem.name=bench ${props[@]+"${props[@]}"} >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  if curl -fs "http://127.0.0.1:$port/actuator/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 $server 2>/dev/null; then cat "$log" >&2; exit 1; fi
  sleep 0.5
done
java -cp "$root/idem-bench/target/benchmarks.jar" dev.idem.bench.http.PaymentsServiceLoad \
  --base "http://127.0.0.1:$port" "${load[@]}"
