-- Idem idempotency records, H2 2.x: the record's own random value, drawn when it is first claimed, that derived keys
-- (RecordKey.derive) carry so that nobody outside can compute them. NULL on records claimed before this column
-- existed: they keep the old derivation, so an operation in flight across the upgrade resumes with the same key.
ALTER TABLE idem_record ADD COLUMN IF NOT EXISTS key_nonce VARCHAR(64);
