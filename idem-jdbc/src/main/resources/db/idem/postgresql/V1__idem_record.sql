-- Idem idempotency records, PostgreSQL 15+. Flyway-style name: run it with your own migration tool,
-- or let JdbcIdempotencyStore.builder(...).createSchemaIfMissing(true) run it.
-- Times are Unix epoch milliseconds (UTC), written from the application's injected Clock.
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
  CONSTRAINT idem_record_pk PRIMARY KEY (scope, operation, idem_key)
);
-- Only in-progress records are in this index, so completed inserts never maintain it.
CREATE INDEX IF NOT EXISTS idem_record_lease ON idem_record (locked_until) WHERE state = 'in_progress';
