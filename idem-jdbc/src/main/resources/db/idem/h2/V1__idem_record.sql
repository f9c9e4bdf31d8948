-- Idem idempotency records, H2 2.x. Flyway-style name: run it with your own migration tool,
-- or let JdbcIdempotencyStore.builder(...).createSchemaIfMissing(true) run it.
-- Times are Unix epoch milliseconds (UTC), written from the application's injected Clock.
CREATE TABLE IF NOT EXISTS idem_record (
  scope            VARCHAR(255) NOT NULL,
  operation        VARCHAR(255) NOT NULL,
  idem_key         VARCHAR(255) NOT NULL,
  state            VARCHAR(16)  NOT NULL,
  fingerprint      CHAR(64)     NOT NULL,
  field_hashes     CHARACTER LARGE OBJECT,
  response_status  INTEGER,
  response_headers CHARACTER LARGE OBJECT,
  response_body    BINARY LARGE OBJECT,
  recovery_point   VARCHAR(64),
  checkpoint       CHARACTER LARGE OBJECT,
  lease_owner      VARCHAR(128),
  locked_until     BIGINT,
  version          BIGINT       NOT NULL,
  created_at       BIGINT       NOT NULL,
  updated_at       BIGINT       NOT NULL,
  expires_at       BIGINT       NOT NULL,
  CONSTRAINT idem_record_pk PRIMARY KEY (scope, operation, idem_key)
);
CREATE INDEX IF NOT EXISTS idem_record_lease ON idem_record (state, locked_until);
