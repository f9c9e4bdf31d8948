package dev.idem.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs schema statements ({@code CREATE ... IF NOT EXISTS}) under a database-wide lock, so that several instances
 * starting together on a fresh database do not race. {@code IF NOT EXISTS} is not safe under concurrency on
 * PostgreSQL: two sessions that both find an index missing both create it, and the second fails with a unique
 * violation on {@code pg_class} (SQLState 23505), which stopped an instance of a three-instance start in a chaos run.
 *
 * <p>PostgreSQL: a session advisory lock, asked for with {@code pg_try_advisory_lock} every few milliseconds rather
 * than waited for in {@code pg_advisory_lock}, for up to {@value #TIMEOUT_SECONDS} s: a session waiting in a statement
 * holds a snapshot, and a {@code CREATE INDEX CONCURRENTLY} run under the lock waits for every older snapshot, so the
 * two would deadlock (SQLState 40P01) and one instance would fail to start. MariaDB: {@code GET_LOCK} with the same
 * timeout; H2: none (its DDL is serialised by the database). On PostgreSQL an index built {@code CONCURRENTLY} on a
 * table without rows is built plainly (see {@link #run}). The lock is released before the connection goes back to
 * its pool, also when a statement fails. Public so that an application can run its own schema files the same way
 * when several instances start together.
 */
public final class SchemaLock {
  /** The advisory lock key on PostgreSQL: any constant shared by every Idem schema script. */
  static final long POSTGRES_KEY = 0x1DE3_5C4E_3A00_0001L;
  /** The named lock on MariaDB. */
  static final String MARIADB_NAME = "idem.schema";
  /** A concurrent index build: group 1 what comes before CONCURRENTLY, group 2 the table (an identifier). */
  private static final Pattern CONCURRENT_INDEX = Pattern.compile(
      "(CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+)CONCURRENTLY\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?\\w+\\s+ON\\s+"
          + "(?:ONLY\\s+)?([A-Za-z_][\\w.]*)",
      Pattern.CASE_INSENSITIVE);
  /** How long an instance waits for the lock, in seconds. */
  static final int TIMEOUT_SECONDS = 120;
  /** The longest pause between two tries for the lock on PostgreSQL, in milliseconds. */
  private static final long MAX_PAUSE_MILLIS = 100;

  private SchemaLock() {}

  /**
   * Runs {@code statements} in order with auto-commit on, holding the schema lock; restores auto-commit after. On
   * PostgreSQL a {@code CREATE INDEX CONCURRENTLY} on a table without rows runs without {@code CONCURRENTLY}.
   */
  public static void run(Connection c, JdbcDialect dialect, List<String> statements) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(true);
    try {
      lock(c, dialect);
      try (Statement st = c.createStatement()) {
        for (String statement : statements) {
          st.execute(dialect == JdbcDialect.POSTGRESQL ? plainOnEmptyTable(c, statement) : statement);
        }
      } finally {
        unlock(c, dialect);
      }
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }

  private static void lock(Connection c, JdbcDialect dialect) throws SQLException {
    if (dialect == JdbcDialect.POSTGRESQL) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
      long pause = 5;
      while (!tryPostgresLock(c)) {
        if (System.nanoTime() - deadline > 0) {
          throw new SQLException("could not take the schema lock (advisory lock " + POSTGRES_KEY + ") within "
              + TIMEOUT_SECONDS + " s: another instance holds it", "55P03");
        }
        try {
          Thread.sleep(pause);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new SQLException("interrupted while waiting for the schema lock", "57014", e);
        }
        pause = Math.min(pause * 2, MAX_PAUSE_MILLIS);
      }
    } else if (dialect == JdbcDialect.MARIADB) {
      try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, ?)")) {
        ps.setString(1, MARIADB_NAME);
        ps.setInt(2, TIMEOUT_SECONDS);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next() || rs.getInt(1) != 1) {
            throw new SQLException("could not take the schema lock '" + MARIADB_NAME + "' within "
                + TIMEOUT_SECONDS + " s: another instance holds it", "55P03");
          }
        }
      }
    }
  }

  /**
   * {@code statement} without {@code CONCURRENTLY} when it builds an index concurrently on a table without rows (one
   * just created): such a build waits for every transaction open in the database, which on a fresh table guards
   * nothing, and the lock a plain build takes on an empty table is over at once.
   */
  private static String plainOnEmptyTable(Connection c, String statement) throws SQLException {
    Matcher m = CONCURRENT_INDEX.matcher(statement);
    if (!m.lookingAt()) {
      return statement;
    }
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1 FROM " + m.group(2)
        + " LIMIT 1")) {
      return rs.next() ? statement
          : m.group(1) + statement.substring(m.end(1)).replaceFirst("(?i)^CONCURRENTLY\\s+", "");
    }
  }

  private static boolean tryPostgresLock(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
      ps.setLong(1, POSTGRES_KEY);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  private static void unlock(Connection c, JdbcDialect dialect) throws SQLException {
    if (dialect == JdbcDialect.POSTGRESQL) {
      execute(c, "SELECT pg_advisory_unlock(?)", POSTGRES_KEY);
    } else if (dialect == JdbcDialect.MARIADB) {
      execute(c, "SELECT RELEASE_LOCK(?)", MARIADB_NAME);
    }
  }

  private static void execute(Connection c, String sql, Object arg) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setObject(1, arg);
      ps.execute();
    }
  }
}
