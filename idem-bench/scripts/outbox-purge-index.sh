#!/usr/bin/env bash
# The outbox purge's last batch before and after V7__idem_outbox_finished_index.sql (BENCHMARKS.md section 22), on
# the local PostgreSQL: a scratch outbox (the V2 schema, renamed) of ROWS delivered events and 50,000 pending ones,
# analysed, of which the MATCH oldest were finished before the cut-off. Then, PASSES times, alternating:
#   before: the purge's DELETE as the store ran it before V7 (ORDER BY seq, no index on delivered_at);
#   after:  the same with the partial index of V7 and the store's DELETE now (ORDER BY delivered_at);
# each under EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back, so every pass deletes the same rows. Prints the
# plan's top line, buffers and execution time. Drops its tables at the end.
#
#   idem-bench/scripts/outbox-purge-index.sh [ROWS=500000] [MATCH=100] [PASSES=3]
set -euo pipefail
rows=${1:-500000}
match=${2:-100}
passes=${3:-3}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
t=bench_purge_outbox
psql=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres -d "${PGDATABASE:-test}")
cleanup() {
  "${psql[@]}" -c "DROP TABLE IF EXISTS ${t}_attempt, $t, ${t}_inbox" >/dev/null 2>&1 || true
}
trap cleanup EXIT
cleanup
sed "s/idem_outbox/$t/g; s/idem_inbox/${t}_inbox/g" \
  "$root/idem-jdbc/src/main/resources/db/idem/postgresql/V2__idem_outbox.sql" | "${psql[@]}" >/dev/null
"${psql[@]}" >/dev/null <<SQL
INSERT INTO $t (id, event_type, aggregate_type, aggregate_id, ordered, payload, destination, status, attempts,
    attempt_base, available_at, created_at, delivered_at)
  SELECT gen_random_uuid()::text, 'payment.settled', 'payment', (g % 10000)::text, false, repeat('x', 300), 'ledger',
    'delivered', 1, 0, g, g, 1000000 + g
  FROM generate_series(1, $rows) g;
INSERT INTO $t (id, event_type, aggregate_type, aggregate_id, ordered, payload, destination, status, attempts,
    attempt_base, available_at, created_at)
  SELECT gen_random_uuid()::text, 'payment.settled', 'payment', (g % 10000)::text, false, repeat('x', 300), 'ledger',
    'pending', 0, 0, 5000000 + g, 5000000 + g
  FROM generate_series(1, 50000) g;
VACUUM ANALYZE $t;
SQL
cutoff=$((1000000 + match))
before="DELETE FROM $t WHERE seq IN (SELECT seq FROM $t WHERE status IN ('delivered', 'discarded')
  AND delivered_at <= $cutoff ORDER BY seq LIMIT 1000 FOR UPDATE SKIP LOCKED)"
after="DELETE FROM $t WHERE seq IN (SELECT seq FROM $t WHERE delivered_at <= $cutoff
  AND status IN ('delivered', 'discarded') ORDER BY delivered_at LIMIT 1000 FOR UPDATE SKIP LOCKED)"
index="CREATE INDEX ${t}_finished ON $t (delivered_at) WHERE delivered_at IS NOT NULL"
explain() { # label, statement, setup
  local plan
  plan="$("${psql[@]}" -At -c "BEGIN; $3 EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $2; ROLLBACK;")"
  printf '%-7s %s | %s | %s\n' "$1" "$(grep -m1 -oE '(Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan)[^(]*' \
    <<<"$plan" | tail -1 | sed 's/ *$//')" "$(grep -m1 -oE 'Buffers: [^$]*' <<<"$plan")" \
    "$(grep -oE 'Execution Time: .*' <<<"$plan")"
}
echo "rows $rows delivered + 50000 pending; $match finished before the cut-off; batch limit 1000"
for p in $(seq 1 "$passes"); do
  explain before "$before" ""
  explain after "$after" "$index;"
done
