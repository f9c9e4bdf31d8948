#!/usr/bin/env bash
# The reference service benchmark once per filter configuration (BENCHMARKS.md): each configuration switches one
# filter off (or, for the retry budget, which the service leaves off, on) through its existing property, and runs
# payments-http.sh with it: a fresh service, a warm-up, then baseline, idem-first and idem-replay passes side by side.
# Configurations alternate round by round (all-on, mdc-off, ..., all-on, mdc-off, ...), so that a change in the
# machine's load spreads over all of them; payments-http-filters.py prints the table (req/s and the
# idem-first/baseline and idem-replay/baseline ratios per configuration, each filter's cost as the difference to
# all-on). Traffic stays on 127.0.0.1.
#
#   idem-bench/scripts/payments-http-filters.sh [--rounds 3] [--out DIR] [--only "all-on mdc-off"]
#     [payments-http.sh flags: --db URL --port N; LOAD_FLAGS: --seconds 6 --passes 2 --warmup 5 --concurrency 16]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scripts="$root/idem-bench/scripts"

# Spring Boot's ServerHttpObservationFilter has no property of its own: its auto-configuration is excluded.
observation=org.springframework.boot.webmvc.autoconfigure.WebMvcObservationAutoConfiguration
# name -> the --set arguments of payments-http.sh ("" for none)
declare -A configs=(
  [all-on]=""
  [mdc-off]="idem.logging.mdc.enabled=false"
  [deadline-off]="idem.server.deadline.enabled=false"
  [observation-off]="spring.autoconfigure.exclude=$observation"
  [budget-on]="idem.server.retry-budget.enabled=true"
)
order=(all-on mdc-off deadline-off observation-off budget-on)
rounds=3
out="$(mktemp -d)"
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --only) read -r -a order <<<"$2"; shift 2 ;;
    *) pass+=("$1"); shift ;;
  esac
done
if [ ${#pass[@]} -eq 0 ]; then
  pass=(--seconds 6 --passes 2 --warmup 5)
fi
for name in "${order[@]}"; do
  [ -n "${configs[$name]+set}" ] || { echo "unknown configuration $name (known: ${!configs[*]})" >&2; exit 2; }
done
mkdir -p "$out"
mvn -q -B -f "$root/pom.xml" -pl idem-bench -am -Dmaven.test.skip=true package >&2

for round in $(seq 1 "$rounds"); do
  for name in "${order[@]}"; do
    set_args=()
    if [ -n "${configs[$name]}" ]; then
      set_args=(--set "${configs[$name]}")
    fi
    echo "round $round/$rounds: $name (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    "$scripts/payments-http.sh" --no-build ${set_args[@]+"${set_args[@]}"} "${pass[@]}" \
      --json "$out/$name-$round.json" >"$out/$name-$round.md" \
      || echo "round $round $name: exit status $? (errors or warnings: $out/$name-$round.md)" >&2
  done
done
python3 "$scripts/payments-http-filters.py" --reference all-on "$out"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); reports in $out" >&2
