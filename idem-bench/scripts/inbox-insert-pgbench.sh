#!/usr/bin/env bash
# Where the batched inbox insert's time goes on PostgreSQL (BENCHMARKS.md sections 10 and 20): pgbench, one client,
# prepared statements, 100 rows per statement with UUIDv7-like ids into tables of 100,000 rows, against a 100-row
# insert into an effect table, with parts of the inbox statement taken away one at a time (inbox_no_on_conflict is the
# first-delivery order's insert), then the plain insert into tables that differ in one respect each: a narrower row,
# the key alone, the key's columns the other way round. Local PostgreSQL only; drops what it makes.
#
#   idem-bench/scripts/inbox-insert-pgbench.sh [seconds per run, default 4] [passes, default 3]
set -euo pipefail
secs="${1:-4}"; passes="${2:-3}"
db=(-h 127.0.0.1 -U postgres -d test)
dir="$(mktemp -d)"
cleanup() {
  psql "${db[@]}" -q -c "DROP TABLE IF EXISTS pb_inbox, pb_inbox_noidx, pb_narrow, pb_key, pb_idfirst, pb_fx; DROP FUNCTION IF EXISTS pb_ids(), pb_hashes(), pb_sources(); DROP SEQUENCE IF EXISTS pb_seq;" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
psql "${db[@]}" -q -v ON_ERROR_STOP=1 2>/dev/null <<'SQL'
DROP TABLE IF EXISTS pb_inbox, pb_inbox_noidx, pb_narrow, pb_key, pb_idfirst, pb_fx;
CREATE TABLE pb_inbox (consumer VARCHAR(255) NOT NULL, event_id VARCHAR(255) NOT NULL, source VARCHAR(255),
  payload_hash CHAR(64) NOT NULL, received_at BIGINT NOT NULL, processed_at BIGINT, result TEXT,
  PRIMARY KEY (consumer, event_id));
CREATE INDEX pb_inbox_received ON pb_inbox (received_at);
CREATE TABLE pb_inbox_noidx (LIKE pb_inbox); ALTER TABLE pb_inbox_noidx ADD PRIMARY KEY (consumer, event_id);
CREATE TABLE pb_narrow (consumer VARCHAR(255) NOT NULL, event_id VARCHAR(255) NOT NULL, payload_hash BYTEA NOT NULL,
  received_at BIGINT NOT NULL, result TEXT, PRIMARY KEY (consumer, event_id));
CREATE INDEX pb_narrow_received ON pb_narrow (received_at);
CREATE TABLE pb_key (consumer VARCHAR(255) NOT NULL, event_id VARCHAR(255) NOT NULL, PRIMARY KEY (consumer, event_id));
CREATE TABLE pb_idfirst (LIKE pb_inbox); ALTER TABLE pb_idfirst ADD PRIMARY KEY (event_id, consumer);
CREATE INDEX pb_idfirst_received ON pb_idfirst (received_at);
CREATE TABLE pb_fx (id BIGSERIAL PRIMARY KEY, event_id VARCHAR(64) NOT NULL, amount INT NOT NULL);
CREATE SEQUENCE pb_seq;
INSERT INTO pb_inbox SELECT 'prefill', lpad(to_hex(g), 12, '0') || '-7abc-8def-' || md5(g::text), 'kafka:x',
  repeat('0', 64), 0, 0 FROM generate_series(1, 100000) g;
INSERT INTO pb_inbox_noidx SELECT * FROM pb_inbox;
INSERT INTO pb_narrow SELECT consumer, event_id, decode(payload_hash, 'hex'), received_at, result FROM pb_inbox;
INSERT INTO pb_key SELECT consumer, event_id FROM pb_inbox;
INSERT INTO pb_idfirst SELECT * FROM pb_inbox;
CREATE FUNCTION pb_ids() RETURNS text[] LANGUAGE sql AS $$ SELECT array_agg(lpad(to_hex(nextval('pb_seq') + 4294967296),
  12, '0') || '-7abc-8def-' || md5(random()::text)) FROM generate_series(1, 100) $$;
CREATE FUNCTION pb_hashes() RETURNS text[] LANGUAGE sql AS $$ SELECT array_agg(md5(random()::text) || md5(random()::text))
  FROM generate_series(1, 100) $$;
CREATE FUNCTION pb_sources() RETURNS text[] LANGUAGE sql AS $$ SELECT array_agg('kafka-topic'::text)
  FROM generate_series(1, 100) $$;
SQL
for t in pb_inbox pb_inbox_noidx pb_narrow pb_key pb_idfirst pb_fx; do psql "${db[@]}" -q -c "VACUUM ANALYZE $t"; done
arrays="unnest(pb_ids()::varchar[], pb_sources()::varchar[], pb_hashes()::char(64)[])"
inbox="INSERT INTO pb_inbox (consumer, event_id, source, payload_hash, received_at, processed_at) SELECT CAST('bench' AS VARCHAR), u.e, u.s, u.h, CAST(1 AS BIGINT), CAST(1 AS BIGINT) FROM $arrays WITH ORDINALITY AS u(e, s, h, n) ORDER BY u.n ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id;"
echo "SELECT count(*) FROM $arrays;" > "$dir/arrays_only.sql"
echo "INSERT INTO pb_fx (event_id, amount) SELECT u.e, 1 FROM $arrays AS u(e, s, h);" > "$dir/effect_rows.sql"
echo "$inbox" > "$dir/inbox.sql"
echo "$inbox" | sed 's/ ORDER BY u.n//' > "$dir/inbox_no_order.sql"
echo "$inbox" | sed 's/ RETURNING event_id//' > "$dir/inbox_no_returning.sql"
echo "$inbox" | sed 's/ ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id//' > "$dir/inbox_no_on_conflict.sql"
echo "$inbox" | sed 's/INSERT INTO pb_inbox /INSERT INTO pb_inbox_noidx /' > "$dir/inbox_no_received_index.sql"
echo "$inbox" | sed 's/u.s, u.h/NULL, u.h/' > "$dir/inbox_no_source.sql"
plain="$(sed 's/ ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id//' "$dir/inbox_no_on_conflict.sql")"
echo "INSERT INTO pb_narrow (consumer, event_id, payload_hash, received_at) SELECT CAST('bench' AS VARCHAR), u.e, decode(u.h, 'hex'), CAST(1 AS BIGINT) FROM $arrays WITH ORDINALITY AS u(e, s, h, n) ORDER BY u.n;" > "$dir/plain_narrow_row.sql"
echo "INSERT INTO pb_key (consumer, event_id) SELECT CAST('bench' AS VARCHAR), u.e FROM $arrays WITH ORDINALITY AS u(e, s, h, n) ORDER BY u.n;" > "$dir/plain_key_only.sql"
echo "$plain" | sed 's/INSERT INTO pb_inbox /INSERT INTO pb_idfirst /' > "$dir/plain_id_first_key.sql"
for pass in $(seq 1 "$passes"); do
  for f in arrays_only effect_rows inbox inbox_no_order inbox_no_returning inbox_no_on_conflict inbox_no_received_index \
      inbox_no_source plain_narrow_row plain_key_only plain_id_first_key; do
    latency=$(pgbench "${db[@]:0:4}" -n -M prepared -T "$secs" -c 1 -f "$dir/$f.sql" test 2>/dev/null \
      | sed -n 's/^latency average = //p')
    printf 'pass %d  %-26s %s\n' "$pass" "$f" "$latency"
  done
done
