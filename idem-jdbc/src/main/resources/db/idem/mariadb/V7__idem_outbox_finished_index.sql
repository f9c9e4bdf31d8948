-- Idem outbox, MariaDB 10.6+: the purge of delivered and discarded events reads this index, oldest finish first,
-- instead of every finished row in the status index (the last batch of every purge read them all, locking them).
-- MariaDB has no partial index: pending and dead rows are in it under NULL, so an enqueue writes one more index
-- entry and a delivery or a discard moves it. InnoDB adds a secondary index in place, without blocking writes.
CREATE INDEX IF NOT EXISTS idem_outbox_finished ON idem_outbox (delivered_at);
