package dev.idem.jdbc.internal;

import dev.idem.jdbc.JdbcDialect;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The SQL of one store: one table, one dialect. Every value is a bind parameter; only the table name is spliced in,
 * after validation.
 */
public final class Sql {
  private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

  /** The columns after the key, in the order every read takes them. */
  static final String VALUES = "state, fingerprint, field_hashes, response_status, response_headers, response_body,"
      + " recovery_point, checkpoint, lease_owner, locked_until, version, created_at, updated_at, expires_at,"
      + " key_nonce, retain_until, resume_attempts";
  static final String COLUMNS = "scope, operation, idem_key, " + VALUES;
  static final String PK = "scope = ? AND operation = ? AND idem_key = ?";
  /** The text that {@link #updateAndCommit} fails to cast when its update matched no row (fencing). */
  public static final String FENCED = "idem: record fenced, rows updated: ";
  /** Keys after a key, in key order: binds scope, scope, operation, operation, key. */
  static final String AFTER = "(scope > ? OR (scope = ? AND (operation > ? OR (operation = ? AND idem_key > ?))))";
  /**
   * Expired records that may go: not uncertain, not in progress with committed phases or under a lease that ends
   * after now (see IdempotencyRecord.isExpired). Binds now.
   */
  static final String PURGEABLE = " AND state <> 'uncertain' AND (state <> 'in_progress' OR (recovery_point IS NULL"
      + " AND (locked_until IS NULL OR locked_until <= ?)))";
  /**
   * Records whose key is free once expired: no retention (written before it existed, or zero), retention over, or in
   * progress (never retained). Binds now. See IdempotencyRecord.isGone.
   */
  static final String FREE = " AND (retain_until IS NULL OR retain_until <= ? OR state = 'in_progress')";
  /**
   * What a tombstone keeps: purge drops the rest (see IdempotencyRecord.tombstone) and moves purge_at to the end of
   * the retention, out of the range purge reads. Binds now (updated_at).
   */
  static final String STRIP = " SET response_headers = NULL, response_body = NULL, field_hashes = NULL,"
      + " checkpoint = NULL, recovery_point = NULL, key_nonce = NULL, lease_owner = NULL, locked_until = NULL,"
      + " version = version + 1, updated_at = ?, purge_at = retain_until";

  public final String table;
  /** Reads no row, but fails when the table or one of its columns is missing. */
  public final String probe;
  /** One record by its key: the columns after the key only, since the caller holds it. */
  public final String find;
  public final String insert;
  public final String insertAndCommit;
  public final String update;
  /**
   * PostgreSQL: {@link #update} and the COMMIT in one execution; when no row matched, the SELECT fails (an integer
   * cast of {@link #FENCED}), so the server skips the COMMIT and the transaction only rolls back.
   */
  public final String updateAndCommit;
  public final String delete;
  public final String deleteIfExpired;
  /** The three steps of a purge batch, in order: free records due, tombstones due, records without purge_at. */
  public final List<PurgeStep> purgeSteps;
  public final String simpleTable;
  public final String listFirst;
  public final String listAfter;
  public final String evict;
  public final String inProgress;
  /** How many records are uncertain; the state a literal, for PostgreSQL's partial index. */
  public final String uncertainCount;
  /** The audit of resolutions: {@code <table>_audit}. */
  public final String auditInsert;
  public final String auditHistory;
  /** Reads no row of the audit table, but fails if it or a column is missing. */
  public final String auditProbe;

  public Sql(JdbcDialect dialect, String table) {
    this.table = checkTable(table);
    find = "SELECT " + VALUES + " FROM " + table + " WHERE " + PK;
    probe = "SELECT " + COLUMNS + ", purge_at FROM " + table + " WHERE 1 = 0";
    insert = "INSERT INTO " + table + " (" + COLUMNS + ", purge_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
        + " ?, ?, ?, ?, ?, ?, ?)";
    insertAndCommit = insert + "; COMMIT";
    update = "UPDATE " + table + " SET state = ?, field_hashes = ?, response_status = ?, response_headers = ?,"
        + " response_body = ?,"
        + " recovery_point = ?, checkpoint = ?, lease_owner = ?, locked_until = ?, version = ?, updated_at = ?,"
        + " resume_attempts = ? WHERE " + PK + " AND version = ?";
    updateAndCommit = "WITH u AS (" + update + " RETURNING 1) SELECT CASE WHEN COUNT(*) = 1 THEN 1 ELSE CAST('"
        + FENCED + "' || COUNT(*) AS INTEGER) END FROM u; COMMIT";
    delete = "DELETE FROM " + table + " WHERE " + PK + " AND version = ?";
    deleteIfExpired = "DELETE FROM " + table + " WHERE " + PK + " AND expires_at <= ?" + FREE + PURGEABLE;
    String delete = "DELETE FROM " + table;
    String strip = "UPDATE " + table + STRIP;
    purgeSteps = List.of(
        new PurgeStep(dialect, table, delete, "purge_at <= ?" + FREE + PURGEABLE, "purge_at"),
        new PurgeStep(dialect, table, strip,
            "purge_at <= ? AND retain_until > ? AND state IN ('completed', 'failed')", "purge_at"),
        new PurgeStep(dialect, table, delete, "purge_at IS NULL AND expires_at <= ?" + PURGEABLE, "expires_at"));
    simpleTable = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
    listFirst = "SELECT " + COLUMNS + " FROM " + table + " WHERE state = ?"
        + " ORDER BY scope, operation, idem_key LIMIT ?";
    listAfter = "SELECT " + COLUMNS + " FROM " + table + " WHERE state = ? AND " + AFTER
        + " ORDER BY scope, operation, idem_key LIMIT ?";
    evict = "DELETE FROM " + table + " WHERE " + PK;
    // One statement on every dialect; bind the current time in epoch ms. The state is a literal, not a parameter, so
    // that PostgreSQL can plan it on its partial lease index (WHERE state = 'in_progress'), even as a generic plan;
    // MariaDB and H2 use their (state, locked_until) index. Only in-progress rows are read, never the final ones.
    inProgress = "SELECT COUNT(*), COALESCE(SUM(CASE WHEN locked_until IS NULL OR locked_until <= ? THEN 1 ELSE 0"
        + " END), 0), MIN(created_at), MIN(locked_until) FROM " + table + " WHERE state = 'in_progress'";
    uncertainCount = "SELECT COUNT(*) FROM " + table + " WHERE state = 'uncertain'";
    String audit = table + "_audit";
    auditInsert = "INSERT INTO " + audit + " (scope, operation, idem_key, version, resolved_at, actor, action,"
        + " from_state, to_state, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    auditHistory = "SELECT version, resolved_at, actor, action, from_state, to_state, reason FROM " + audit
        + " WHERE " + PK + " ORDER BY version";
    auditProbe = "SELECT scope, operation, idem_key, version, resolved_at, actor, action, from_state, to_state, reason"
        + " FROM " + audit + " WHERE 1 = 0";
  }

  /**
   * Uncertain records of {@code operations} operations after a key: bind the names, the key (five, when after), the
   * limit.
   */
  public String findUncertain(int operations, boolean after) {
    return "SELECT " + COLUMNS + " FROM " + table + " WHERE state = 'uncertain' AND operation IN ("
        + String.join(", ", Collections.nCopies(operations, "?")) + ")" + (after ? " AND " + AFTER : "")
        + " ORDER BY scope, operation, idem_key LIMIT ?";
  }

  /** In-progress records of {@code operations} operations whose lease ended: bind now, the names, the limit. */
  public String findLeaseExpired(int operations) {
    return "SELECT " + COLUMNS + " FROM " + table + " WHERE state = 'in_progress' AND locked_until <= ?"
        + " AND operation IN (" + String.join(", ", Collections.nCopies(operations, "?")) + ") ORDER BY locked_until"
        + " LIMIT ?";
  }

  /**
   * One step of a purge batch: an action (a DELETE, or the UPDATE that makes tombstones) on the rows that meet a
   * condition, oldest first, rows other transactions hold skipped. Every parameter but the keys and the limit is now.
   *
   * @param oneStatement the action on up to {@code ?} (the last parameter) rows; {@code null} on MariaDB
   * @param select MariaDB: the keys of up to {@code ?} (the last parameter) rows, locked, at READ COMMITTED
   * @param byKey MariaDB: the action on one selected key (the last three parameters), its condition checked again
   */
  public record PurgeStep(String oneStatement, String select, String byKey) {
    PurgeStep(JdbcDialect dialect, String table, String action, String condition, String order) {
      this(switch (dialect) {
        // SKIP LOCKED: rows a live transaction holds (a key being reused) are left for the next round.
        case POSTGRESQL -> action + " WHERE (scope, operation, idem_key) IN (SELECT scope, operation, idem_key FROM "
            + table + " WHERE " + condition + " ORDER BY " + order + " LIMIT ? FOR UPDATE SKIP LOCKED)";
        // select + byKey at READ COMMITTED: no gap locks, locked rows skipped
        case MARIADB -> null;
        case H2 -> action + " WHERE " + condition + " FETCH FIRST ? ROWS ONLY";
      }, "SELECT scope, operation, idem_key FROM " + table + " WHERE " + condition + " ORDER BY " + order
          + " LIMIT ? FOR UPDATE SKIP LOCKED", action + " WHERE " + condition + " AND " + PK);
    }
  }

  /** How many parameters a statement has: none of ours holds a literal question mark. */
  public static int parameters(String statement) {
    return (int) statement.chars().filter(ch -> ch == '?').count();
  }

  public static String checkTable(String table) {
    if (table == null || !TABLE.matcher(table).matches()) {
      throw new IllegalArgumentException("table must be an SQL identifier, optionally schema-qualified"
          + " ([A-Za-z_][A-Za-z0-9_]*), got '" + table + "'");
    }
    return table;
  }
}
