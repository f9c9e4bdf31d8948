-- Idem idempotency records, H2: the index on expires_at alone, which V1 created before, goes. Purge
-- reads (purge_at, expires_at) of V4 for every range, the records written before purge_at existed included
-- (purge_at IS NULL AND expires_at <= now), so the index served no query, and every insert of a record paid for it
-- (about 75 bytes of WAL of some 820). Dropping an index rewrites nothing.
DROP INDEX IF EXISTS idem_record_expires_at;
