package dev.idem.jdbc.internal;

/**
 * The SQL of a record table partitioned by {@code gone_at} (PostgreSQL only): the claim's insert with its advisory
 * lock, the two row steps that purge keeps, and the statements that make, list and drop partitions. Every value is a
 * bind parameter except partition names and bounds, which the store derives itself (validated table name, epoch ms).
 */
public final class PartitionedSql {
  /**
   * Rows that must outlive their partition: not final, and not an in-progress claim without a recovery point (those
   * are gone once expired). Written as the partial index {@code <table>_unfinished} is, so that it serves the query.
   */
  static final String LIVE = "state <> 'completed' AND state <> 'failed'"
      + " AND (state <> 'in_progress' OR recovery_point IS NOT NULL)";

  public final String table;
  /** The partition names' prefix: the table's unqualified name and {@code _p}. */
  public final String partitionPrefix;
  /** The schema prefix of partition names ({@code "s."}), or empty when the table is not schema-qualified. */
  public final String schemaPrefix;
  /** Reads no row, but fails when the table or one of its columns (gone_at included) is missing. */
  public final String probe;
  /** One row when the table is partitioned: bind the table name. */
  public final String isPartitioned;
  /**
   * Two statements in one execution: the advisory lock on the key (bind the lock key), which fails unless the
   * transaction runs at READ COMMITTED; then the insert (bind the 21 values of {@link Sql#insert}, the key again and
   * the record's gone_at). The insert is a statement of its own, so that its snapshot sees what the previous holder
   * of the lock committed; it takes the gone_at of a row the key already has, so that a duplicate fails on the
   * primary key of that row's partition.
   */
  public final String insert;
  public final String insertAndCommit;
  /** The partitions: name and bound expression. Bind the table name. */
  public final String partitions;
  /** Moves live rows below a bound to another gone_at: bind the new gone_at and the bound. */
  public final String moveLive;
  /**
   * Moves in-progress rows below a bound whose lease ends after now (a takeover shortly before the TTL leases a claim
   * past its gone_at): bind the new gone_at, the bound and now. Read through the lease index.
   */
  public final String moveLeased;
  /**
   * Moves rows below a bound that are not gone at now by their own times (a claim that waited for the deletion of its
   * key's old row took that row's gone_at): bind the new gone_at, the bound and now.
   */
  public final String moveMisplaced;
  /**
   * Deletes up to {@code ?} expired claims without a recovery point whose lease has ended: bind now, now and the
   * limit.
   */
  public final String deleteExpiredClaims;
  /** Turns up to {@code ?} expired final records into tombstones: bind now (updated_at), now, now and the limit. */
  public final String shrink;

  public PartitionedSql(String table) {
    this.table = Sql.checkTable(table);
    int dot = table.indexOf('.');
    this.schemaPrefix = dot < 0 ? "" : table.substring(0, dot + 1);
    this.partitionPrefix = table.substring(dot + 1) + "_p";
    probe = "SELECT " + Sql.COLUMNS + ", purge_at, gone_at FROM " + table + " WHERE 1 = 0";
    isPartitioned = "SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass(?)";
    String isolation = "current_setting('transaction_isolation')";
    insert = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0)) WHERE " + isolation + " = 'read committed'"
        // not READ COMMITTED: fail with a message that says why, rather than insert on a stale snapshot
        + " OR CAST(" + isolation + " || ' isolation: partitioned expiry needs read committed' AS BOOLEAN);"
        + " INSERT INTO " + table + " (" + Sql.COLUMNS + ", purge_at, gone_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
        + " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE((SELECT MAX(gone_at) FROM " + table + " WHERE " + Sql.PK + "), ?))";
    insertAndCommit = insert + "; COMMIT";
    partitions = "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
        + " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(?)";
    moveLive = "UPDATE " + table + " SET gone_at = ? WHERE gone_at < ? AND " + LIVE;
    moveLeased = "UPDATE " + table + " SET gone_at = ? WHERE gone_at < ? AND state = 'in_progress'"
        + " AND locked_until > ?";
    moveMisplaced = "UPDATE " + table + " SET gone_at = ? WHERE gone_at < ? AND gone_at < COALESCE(retain_until,"
        + " expires_at) AND COALESCE(retain_until, expires_at) > ?";
    String keys = "(scope, operation, idem_key, gone_at) IN (SELECT scope, operation, idem_key, gone_at FROM " + table;
    deleteExpiredClaims = "DELETE FROM " + table + " WHERE " + keys + " WHERE state <> 'completed'"
        + " AND state <> 'failed' AND state = 'in_progress' AND recovery_point IS NULL AND expires_at <= ?"
        + " AND (locked_until IS NULL OR locked_until <= ?) ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)";
    shrink = "UPDATE " + table + Sql.STRIP + " WHERE " + keys + " WHERE purge_at < retain_until AND purge_at <= ?"
        + " AND retain_until > ? AND (state = 'completed' OR state = 'failed') ORDER BY purge_at LIMIT ?"
        + " FOR UPDATE SKIP LOCKED)";
  }

  /** Creates the standalone table of a partition, shaped as the parent, if missing. */
  public String createPartition(String partition) {
    return "CREATE TABLE IF NOT EXISTS " + schemaPrefix + partition + " (LIKE " + table
        + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS)";
  }

  /**
   * Attaches a partition for {@code [from, to)} unless it already is one. ATTACH takes a SHARE UPDATE EXCLUSIVE lock
   * on the parent, which claims do not conflict with (CREATE TABLE ... PARTITION OF would take ACCESS EXCLUSIVE).
   */
  public String attachPartition(String partition, long from, long to) {
    String qualified = schemaPrefix + partition;
    return "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass('" + qualified
        + "')) THEN ALTER TABLE " + table + " ATTACH PARTITION " + qualified + " FOR VALUES FROM (" + from + ") TO ("
        + to + "); END IF; END $$";
  }

  /** Makes the transaction's lock waits give up after {@code millis}. */
  public String lockTimeout(long millis) {
    return "SET LOCAL lock_timeout = '" + millis + "ms'";
  }

  /** Locks the parent table, and so every partition, against every other access until the transaction ends. */
  public String lockTable() {
    return "LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE";
  }

  /** Drops a partition (which takes an ACCESS EXCLUSIVE lock on the parent too). */
  public String dropPartition(String partition) {
    return "DROP TABLE IF EXISTS " + schemaPrefix + partition;
  }
}
