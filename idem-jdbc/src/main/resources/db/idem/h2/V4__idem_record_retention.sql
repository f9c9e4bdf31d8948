-- Idem idempotency records, H2 2.x: retention past the TTL (OperationPolicy.retention).
-- retain_until: when a final record's tombstone ends and its key is free again (expires_at plus the retention). NULL
-- on records written before this column existed: they are gone at expires_at, as before.
-- purge_at: when purge next acts on the row: its expires_at while it holds a response (then it becomes a tombstone,
-- or goes), its retain_until once it is a tombstone (then it goes). NULL on records written before this column
-- existed: purge reads their expires_at. The index serves both ranges (purge_at <= now; purge_at IS NULL AND
-- expires_at <= now), so that purge never walks the tombstones.
ALTER TABLE idem_record ADD COLUMN IF NOT EXISTS retain_until BIGINT;
ALTER TABLE idem_record ADD COLUMN IF NOT EXISTS purge_at BIGINT;
CREATE INDEX IF NOT EXISTS idem_record_purge_at ON idem_record (purge_at, expires_at);
