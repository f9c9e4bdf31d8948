-- Idem idempotency records, MariaDB 10.6+ (and MySQL 8). Flyway-style name: run it with your own migration tool,
-- or let JdbcIdempotencyStore.builder(...).createSchemaIfMissing(true) run it.
-- Binary NO PAD collations: keys are case-sensitive ('Key-A' and 'key-a' are two keys), and trailing spaces count
-- ('acme' and 'acme ' are two scopes; a PAD collation would make them one). On MySQL 8 use utf8mb4_0900_bin and
-- ascii_bin with a NO PAD check of your own, or VARBINARY columns.
-- Times are Unix epoch milliseconds (UTC), written from the application's injected Clock.
CREATE TABLE IF NOT EXISTS idem_record (
  scope            VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  operation        VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  idem_key         VARCHAR(255) CHARACTER SET ascii COLLATE ascii_nopad_bin NOT NULL,
  state            VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_nopad_bin NOT NULL,
  fingerprint      CHAR(64)     CHARACTER SET ascii COLLATE ascii_nopad_bin NOT NULL,
  field_hashes     MEDIUMTEXT   CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  response_status  INTEGER,
  response_headers MEDIUMTEXT   CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  response_body    LONGBLOB,
  recovery_point   VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  checkpoint       MEDIUMTEXT   CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  lease_owner      VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  locked_until     BIGINT,
  version          BIGINT       NOT NULL,
  created_at       BIGINT       NOT NULL,
  updated_at       BIGINT       NOT NULL,
  expires_at       BIGINT       NOT NULL,
  PRIMARY KEY (scope, operation, idem_key),
  INDEX idem_record_lease (state, locked_until)
) ENGINE=InnoDB;
