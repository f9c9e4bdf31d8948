-- Idem outbox, attempt history and inbox, MariaDB 10.6+ (SKIP LOCKED). Run it with your own migration tool, or let
-- JdbcOutboxStore.builder(...).createSchemaIfMissing(true) / JdbcInboxStore.builder(...).createSchemaIfMissing(true)
-- run it.
-- Times are Unix epoch milliseconds (UTC) from the application's Clock.
-- seq orders events (per aggregate when ordered); id is the event id transports send (webhook-id, message-id).
-- attempts counts every attempt ever made and numbers the attempt history; attempts - attempt_base are those since
-- the last replay, which the relay compares with its maximum. delivered_at is also the time an event was discarded.
CREATE TABLE IF NOT EXISTS idem_outbox (
  seq            BIGINT        NOT NULL AUTO_INCREMENT,
  id             CHAR(36)      NOT NULL,
  event_type     VARCHAR(255)  NOT NULL,
  aggregate_type VARCHAR(100)  NOT NULL,
  aggregate_id   VARCHAR(255)  NOT NULL,
  ordered        BOOLEAN       NOT NULL,
  payload        MEDIUMTEXT    NOT NULL,
  headers        TEXT,
  destination    VARCHAR(255)  NOT NULL,
  status         VARCHAR(16)   NOT NULL,
  attempts       INTEGER       NOT NULL,
  attempt_base   INTEGER       NOT NULL,
  available_at   BIGINT        NOT NULL,
  lease_owner    VARCHAR(64),
  lease_until    BIGINT,
  last_error     VARCHAR(1000),
  created_at     BIGINT        NOT NULL,
  delivered_at   BIGINT,
  PRIMARY KEY (seq),
  UNIQUE KEY idem_outbox_id (id),
  -- the relay's claim: an index range scan over due pending rows (a claimed row's available_at is its lease expiry)
  KEY idem_outbox_due (status, available_at, seq),
  -- ordering per aggregate: is there an older pending or dead event of the same aggregate (and destination)?
  KEY idem_outbox_aggregate (aggregate_type, aggregate_id, ordered, status, seq),
  -- operator listing by status, and the purge of delivered rows, oldest first
  KEY idem_outbox_status (status, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS idem_outbox_attempt (
  event_seq     BIGINT        NOT NULL,
  attempt       INTEGER       NOT NULL,
  attempted_at  BIGINT        NOT NULL,
  error         VARCHAR(1000),
  response_code INTEGER,
  PRIMARY KEY (event_seq, attempt),
  CONSTRAINT idem_outbox_attempt_event FOREIGN KEY (event_seq) REFERENCES idem_outbox (seq) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS idem_inbox (
  consumer      VARCHAR(255)  NOT NULL,
  event_id      VARCHAR(255)  NOT NULL,
  source        VARCHAR(255),
  payload_hash  CHAR(64)      NOT NULL,
  received_at   BIGINT        NOT NULL,
  processed_at  BIGINT,
  result        TEXT,
  PRIMARY KEY (consumer, event_id),
  KEY idem_inbox_received (received_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
