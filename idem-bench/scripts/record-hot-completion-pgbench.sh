#!/usr/bin/env bash
# What a completion written in place (a HOT update) would save on PostgreSQL (docs/design-decisions.md, "Atomic
# mode's cost over the bare transaction"; BENCHMARKS.md section 4): pgbench, one client, prepared statements, the
# claim's insert and the completion's update of leased and phased modes, each in its own transaction, against two
# copies of the record table of 100,000 rows:
#   current   the record table as the schema files make it: the lease and uncertain indexes name the state in their
#             predicates, so no completion can be a HOT update;
#   hot       the same columns and data with indexes the completion leaves alone (the lease index on a column the
#             completion keeps, the uncertain index on a column of its own) and a fill factor of 80.
# Per pass: pairs per second, WAL bytes per pair (pg_current_wal_lsn), PostgreSQL's CPU per pair (every postgres
# process, with the ticks of the backends that exited meanwhile, which the postmaster reaps), and the share of HOT
# updates. Commits do not
# wait for the flush (synchronous_commit = off), so the figures are the server's work, not the disk's. Local
# PostgreSQL only; drops what it makes.
#
#   idem-bench/scripts/record-hot-completion-pgbench.sh [seconds per run, default 6] [passes, default 4]
set -euo pipefail
secs="${1:-6}"; passes="${2:-4}"
db=(-h 127.0.0.1 -U postgres -d test)
dir="$(mktemp -d)"
cleanup() {
  psql "${db[@]}" -q -c "DROP TABLE IF EXISTS hb_current, hb_hot;" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
postmaster="$(pgrep -o -x postgres)"
[ -r "/proc/$postmaster/stat" ] || { echo "no local postgres process found" >&2; exit 1; }
tick="$(getconf CLK_TCK)"
ticks() { # every postgres process's CPU ticks, those of the backends that exited included
  local sum p
  sum="$(awk '{print $16 + $17}' "/proc/$postmaster/stat")"
  for p in $(pgrep -x postgres || true); do
    sum=$((sum + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$sum"
}
psql "${db[@]}" -q -v ON_ERROR_STOP=1 2>/dev/null <<'SQL'
DROP TABLE IF EXISTS hb_current, hb_hot;
CREATE TABLE hb_current (scope VARCHAR(255) NOT NULL, operation VARCHAR(255) NOT NULL, idem_key VARCHAR(255) NOT NULL,
  state VARCHAR(16) NOT NULL, fingerprint CHAR(64) NOT NULL, field_hashes TEXT, response_status INTEGER,
  response_headers TEXT, response_body BYTEA, recovery_point VARCHAR(64), checkpoint TEXT, lease_owner VARCHAR(128),
  locked_until BIGINT, version BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL, key_nonce VARCHAR(64), retain_until BIGINT, purge_at BIGINT, resume_attempts INTEGER,
  lease_from BIGINT, uncertain_at BIGINT, PRIMARY KEY (scope, operation, idem_key));
CREATE TABLE hb_hot (LIKE hb_current INCLUDING ALL) WITH (fillfactor = 80);
CREATE INDEX hb_current_lease ON hb_current (locked_until) WHERE state = 'in_progress';
CREATE INDEX hb_current_purge ON hb_current (purge_at, expires_at);
CREATE INDEX hb_current_uncertain ON hb_current (operation, scope, idem_key) WHERE state = 'uncertain';
CREATE INDEX hb_hot_lease ON hb_hot (lease_from) WHERE lease_from IS NOT NULL;
CREATE INDEX hb_hot_purge ON hb_hot (purge_at, expires_at);
CREATE INDEX hb_hot_uncertain ON hb_hot (operation, scope, idem_key) WHERE uncertain_at IS NOT NULL;
INSERT INTO hb_current SELECT 'tenant-' || (g % 50), 'POST /payments', md5(g::text), 'completed',
  md5(g::text) || md5(g::text), '{"amount":"0123456789abcdef","currency":"0123456789abcdef",'
  || '"customer":"0123456789abcdef","reference":"0123456789abcdef"}', 201,
  '{"content-type":["application/json"],"location":["/payments/pay_x"]}', convert_to(repeat('x', 180), 'UTF8'),
  'captured', '{"charge":"ch_1234567890"}', NULL, NULL, 2, 1, 1, 4102444800000, 'nonce-0123456789abcdef', NULL,
  4102444800000, NULL, 1, NULL FROM generate_series(1, 100000) g;
INSERT INTO hb_hot SELECT * FROM hb_current;
VACUUM ANALYZE hb_current;
VACUUM ANALYZE hb_hot;
SQL
for t in current hot; do
  cat > "$dir/$t.sql" <<SQL
\set n random(1, 1000000000)
BEGIN;
INSERT INTO hb_$t (scope, operation, idem_key, state, fingerprint, field_hashes, response_status, response_headers, response_body, recovery_point, checkpoint, lease_owner, locked_until, version, created_at, updated_at, expires_at, key_nonce, retain_until, purge_at, resume_attempts, lease_from) VALUES ('tenant-' || (:n % 50), 'POST /payments', md5(:n::text || clock_timestamp()::text), 'in_progress', md5('a') || md5('b'), '{"amount":"0123456789abcdef","currency":"0123456789abcdef","customer":"0123456789abcdef","reference":"0123456789abcdef"}', NULL, NULL, NULL, 'created', '{"payment":"pay_123"}', 'node-1', 1700000030000, 1, 1700000000000, 1700000000000, 4102444800000, 'nonce-0123456789abcdef', NULL, 4102444800000, NULL, 1700000030000) RETURNING idem_key \gset
COMMIT;
BEGIN;
UPDATE hb_$t SET state = 'completed', response_status = 201, response_headers = '{"content-type":["application/json"],"location":["/payments/pay_x"]}', response_body = convert_to(repeat('x', 180), 'UTF8'), recovery_point = 'captured', checkpoint = '{"charge":"ch_1234567890"}', lease_owner = NULL, locked_until = NULL, version = 2, updated_at = 1700000001000, resume_attempts = NULL WHERE scope = 'tenant-' || (:n % 50) AND operation = 'POST /payments' AND idem_key = :idem_key AND version = 1;
COMMIT;
SQL
done
run() { # table seconds -> "pairs wal_bytes cpu_ticks"
  local before after c0 c1 out
  before="$(psql "${db[@]}" -Atc 'SELECT pg_current_wal_lsn()')"; sleep 0.3; c0="$(ticks)"
  out="$(PGOPTIONS='-c synchronous_commit=off' pgbench "${db[@]:0:4}" -n -M prepared -T "$2" -c 1 -f "$dir/$1.sql" \
    test 2>&1)"
  sleep 0.3; c1="$(ticks)"
  after="$(psql "${db[@]}" -Atc 'SELECT pg_current_wal_lsn()')"
  echo "$(sed -n 's/.*processed: \([0-9]*\).*/\1/p' <<<"$out") \
$(psql "${db[@]}" -Atc "SELECT pg_wal_lsn_diff('$after', '$before')::bigint") $((c1 - c0))"
}
run current 2 >/dev/null; run hot 2 >/dev/null # priming, discarded
printf '| pass | table | pairs/s | WAL B/pair | backend CPU µs/pair |\n| ---: | --- | ---: | ---: | ---: |\n'
for pass in $(seq 1 "$passes"); do
  order="current hot"; [ $((pass % 2)) -eq 0 ] && order="hot current"
  for t in $order; do
    read -r pairs wal used < <(run "$t" "$secs")
    printf '| %d | %s | %d | %d | %d |\n' "$pass" "$t" $((pairs / secs)) $((wal / pairs)) \
      $((used * 1000000 / tick / pairs))
  done
done
echo
psql "${db[@]}" -Atc "SELECT relname || ': ' || n_tup_hot_upd || ' of ' || n_tup_upd || ' updates HOT'
  FROM pg_stat_user_tables WHERE relname IN ('hb_current', 'hb_hot') ORDER BY relname"
