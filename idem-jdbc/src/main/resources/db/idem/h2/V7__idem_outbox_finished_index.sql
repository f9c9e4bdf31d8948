-- Idem outbox, H2 2.x: the purge of delivered and discarded events reads this index instead of scanning the table
-- for rows finished before the cut-off. H2 has no partial index: pending and dead rows are in it under NULL.
CREATE INDEX IF NOT EXISTS idem_outbox_finished ON idem_outbox (delivered_at);
