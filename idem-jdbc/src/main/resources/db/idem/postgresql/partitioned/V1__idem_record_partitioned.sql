-- Idem idempotency records, PostgreSQL 15+, partitioned by the time each row is certainly gone, so that purge drops
-- whole partitions instead of deleting rows (JdbcIdempotencyStore.builder(...).partitionedExpiry(width)). For new
-- installations; docs/jdbc.md gives the migration of an existing table. The store creates and drops the partitions
-- itself (named idem_record_pYYYYMMDDHHMM, UTC, one per width).
-- gone_at: epoch ms, COALESCE(retain_until, expires_at) at insert, never updated by a claim: at that time the row is
-- gone by its own rules unless it is in progress with a recovery point or uncertain; purge moves such rows to a newer
-- partition before it drops an old one.
-- A claim that waited for the deletion of its key's old row (purge, evict) is inserted with that row's gone_at (see
-- below): purge moves such a row too, found through the misplaced index, before it drops its partition.
-- The primary key must contain the partition column, so it is not the arbiter of a race here: an insert first takes
-- a transaction-scoped advisory lock on the key, then inserts with the gone_at of any row the key already has, so
-- that a duplicate lands in the same partition and fails on this key.
CREATE TABLE IF NOT EXISTS idem_record (
  scope            VARCHAR(255) NOT NULL,
  operation        VARCHAR(255) NOT NULL,
  idem_key         VARCHAR(255) NOT NULL,
  state            VARCHAR(16)  NOT NULL,
  fingerprint      CHAR(64)     NOT NULL,
  field_hashes     TEXT,
  response_status  INTEGER,
  response_headers TEXT,
  response_body    BYTEA,
  recovery_point   VARCHAR(64),
  checkpoint       TEXT,
  lease_owner      VARCHAR(128),
  locked_until     BIGINT,
  version          BIGINT       NOT NULL,
  created_at       BIGINT       NOT NULL,
  updated_at       BIGINT       NOT NULL,
  expires_at       BIGINT       NOT NULL,
  key_nonce        VARCHAR(64),
  retain_until     BIGINT,
  purge_at         BIGINT,
  gone_at          BIGINT       NOT NULL,
  CONSTRAINT idem_record_pk PRIMARY KEY (scope, operation, idem_key, gone_at)
) PARTITION BY RANGE (gone_at);
-- Only in-progress records are in this index, so completed inserts never maintain it (the completer reads it).
CREATE INDEX IF NOT EXISTS idem_record_lease ON idem_record (locked_until) WHERE state = 'in_progress';
-- Only records not yet final: purge finds expired claims to delete, and the live rows to move before a drop.
CREATE INDEX IF NOT EXISTS idem_record_unfinished ON idem_record (expires_at)
  WHERE state <> 'completed' AND state <> 'failed';
-- Only records still to become tombstones (purge_at moves to retain_until when they do, and leaves the index).
CREATE INDEX IF NOT EXISTS idem_record_shrink ON idem_record (purge_at) WHERE purge_at < retain_until;
-- Only rows whose gone_at is earlier than their own times say: normally none (see the header).
CREATE INDEX IF NOT EXISTS idem_record_misplaced ON idem_record (gone_at)
  WHERE gone_at < COALESCE(retain_until, expires_at);
