package dev.idem.jdbc.internal;

import dev.idem.jdbc.JdbcDialect;
import java.util.Collections;
import java.util.regex.Pattern;

/**
 * The SQL of one store: one table, one dialect. Every value is a bind parameter; only the table name is spliced in,
 * after validation.
 */
public final class Sql {
  private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

  static final String COLUMNS = "scope, operation, idem_key, state, fingerprint, field_hashes, response_status,"
      + " response_headers, response_body, recovery_point, checkpoint, lease_owner, locked_until, version,"
      + " created_at, updated_at, expires_at, key_nonce";
  static final String PK = "scope = ? AND operation = ? AND idem_key = ?";
  /** Expired records that may go: not in progress with committed phases (see IdempotencyRecord.isExpired). */
  static final String PURGEABLE = " AND (state <> 'in_progress' OR recovery_point IS NULL)";

  public final String table;
  /** Reads no row, but fails when the table or one of its columns is missing. */
  public final String probe;
  public final String find;
  public final String insert;
  public final String insertAndCommit;
  public final String update;
  public final String delete;
  public final String deleteIfExpired;
  public final String purge;
  public final String purgeSelect;
  public final String purgeByKey;
  public final String simpleTable;
  public final String listFirst;
  public final String listAfter;
  public final String evict;
  public final String inProgress;

  public Sql(JdbcDialect dialect, String table) {
    this.table = checkTable(table);
    find = "SELECT " + COLUMNS + " FROM " + table + " WHERE " + PK;
    probe = "SELECT " + COLUMNS + " FROM " + table + " WHERE 1 = 0";
    insert = "INSERT INTO " + table + " (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
        + " ?)";
    insertAndCommit = insert + "; COMMIT";
    update = "UPDATE " + table + " SET state = ?, response_status = ?, response_headers = ?, response_body = ?,"
        + " recovery_point = ?, checkpoint = ?, lease_owner = ?, locked_until = ?, version = ?, updated_at = ?"
        + " WHERE " + PK + " AND version = ?";
    delete = "DELETE FROM " + table + " WHERE " + PK + " AND version = ?";
    deleteIfExpired = "DELETE FROM " + table + " WHERE " + PK + " AND expires_at <= ?" + PURGEABLE;
    purge = switch (dialect) {
      // SKIP LOCKED: rows a live transaction holds (a key being reused) are left for the next round.
      case POSTGRESQL -> "DELETE FROM " + table + " WHERE (scope, operation, idem_key) IN (SELECT scope, operation,"
          + " idem_key FROM " + table + " WHERE expires_at <= ?" + PURGEABLE + " ORDER BY expires_at LIMIT ?"
          + " FOR UPDATE SKIP LOCKED)";
      // purgeSelect + purgeByKey at READ COMMITTED: no gap locks, locked rows skipped
      case MARIADB -> null;
      case H2 -> "DELETE FROM " + table + " WHERE expires_at <= ?" + PURGEABLE + " FETCH FIRST ? ROWS ONLY";
    };
    purgeSelect = "SELECT scope, operation, idem_key FROM " + table + " WHERE expires_at <= ?" + PURGEABLE
        + " ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED";
    purgeByKey = "DELETE FROM " + table + " WHERE " + PK + " AND expires_at <= ?" + PURGEABLE;
    simpleTable = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
    listFirst = "SELECT " + COLUMNS + " FROM " + table + " WHERE state = ?"
        + " ORDER BY scope, operation, idem_key LIMIT ?";
    listAfter = "SELECT " + COLUMNS + " FROM " + table + " WHERE state = ? AND (scope > ? OR (scope = ? AND"
        + " (operation > ? OR (operation = ? AND idem_key > ?)))) ORDER BY scope, operation, idem_key LIMIT ?";
    evict = "DELETE FROM " + table + " WHERE " + PK;
    // One statement on every dialect; bind the current time in epoch ms. The state is a literal, not a parameter, so
    // that PostgreSQL can plan it on its partial lease index (WHERE state = 'in_progress'), even as a generic plan;
    // MariaDB and H2 use their (state, locked_until) index. Only in-progress rows are read, never the final ones.
    inProgress = "SELECT COUNT(*), COALESCE(SUM(CASE WHEN locked_until IS NULL OR locked_until <= ? THEN 1 ELSE 0"
        + " END), 0), MIN(created_at), MIN(locked_until) FROM " + table + " WHERE state = 'in_progress'";
  }

  /** In-progress records of {@code operations} operations whose lease ended: bind now, the names, the limit. */
  public String findLeaseExpired(int operations) {
    return "SELECT " + COLUMNS + " FROM " + table + " WHERE state = 'in_progress' AND locked_until <= ?"
        + " AND operation IN (" + String.join(", ", Collections.nCopies(operations, "?")) + ") ORDER BY locked_until"
        + " LIMIT ?";
  }

  public static String checkTable(String table) {
    if (table == null || !TABLE.matcher(table).matches()) {
      throw new IllegalArgumentException("table must be an SQL identifier, optionally schema-qualified"
          + " ([A-Za-z_][A-Za-z0-9_]*), got '" + table + "'");
    }
    return table;
  }
}
