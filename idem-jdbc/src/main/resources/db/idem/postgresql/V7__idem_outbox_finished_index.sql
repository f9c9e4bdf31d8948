-- Idem outbox, PostgreSQL 15+: the purge of delivered and discarded events reads this index, oldest finish first,
-- instead of scanning the table for rows finished before the cut-off (the last batch of every purge read every row).
-- Only finished rows have a delivered_at (a replay clears it), so the index holds nothing of pending or dead events:
-- an enqueue and a claim write nothing to it, a delivery or a discard writes one entry. CONCURRENTLY builds it
-- without blocking enqueues and relays (the store runs schema files in auto-commit; a migration tool must run this
-- file outside a transaction). A build that failed leaves an invalid index that IF NOT EXISTS then keeps: drop it
-- (DROP INDEX CONCURRENTLY idem_outbox_finished) and run the file again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS idem_outbox_finished ON idem_outbox (delivered_at)
  WHERE delivered_at IS NOT NULL;
