-- Idem idempotency records, H2 2.x: uncertain records and the audit of their resolutions.
-- resume_attempts: how many resumptions of a phased record failed; past the operation's resume cap the record becomes
-- 'uncertain'. NULL on records written before this column existed, or by a node not yet upgraded: read as 0. Adding a
-- nullable column without a default rewrites nothing.
-- Upgrade every node before a record can become uncertain: a node without this version cannot read the state.
ALTER TABLE idem_record ADD COLUMN IF NOT EXISTS resume_attempts INTEGER;
-- H2 reads uncertain records through the (state, locked_until) index of V1.
-- One row per resolution that took effect (by a reconciler or an operator), written in the transaction that changed
-- the record, keyed by the record's version after it. Rows outlive their record: purge and eviction leave them.
CREATE TABLE IF NOT EXISTS idem_record_audit (
  scope       VARCHAR(255) NOT NULL,
  operation   VARCHAR(255) NOT NULL,
  idem_key    VARCHAR(255) NOT NULL,
  version     BIGINT        NOT NULL,
  resolved_at BIGINT        NOT NULL,
  actor       VARCHAR(255) NOT NULL,
  action      VARCHAR(16)   NOT NULL,
  from_state  VARCHAR(16)   NOT NULL,
  to_state    VARCHAR(16)   NOT NULL,
  reason      VARCHAR(1000) NOT NULL,
  CONSTRAINT idem_record_audit_pk PRIMARY KEY (scope, operation, idem_key, version)
);
