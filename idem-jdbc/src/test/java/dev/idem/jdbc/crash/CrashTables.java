package dev.idem.jdbc.crash;

import dev.idem.jdbc.JdbcDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The business tables of the crash tests, shared by the parent and the child JVM. Rows are keyed by per-run UUIDs, so
 * data of other runs and other tests does not matter.
 *
 * <ul>
 *   <li>{@code idem_crash_effect}: the business row of the atomic scenario, one per (scope, key) marker. Its primary
 *       key makes a retry's insert wait on a row the killed session still held, so a lingering lock would show.
 *   <li>{@code idem_crash_payment}: the payments of the phased scenario.
 *   <li>{@code idem_crash_external}: the fake payment provider, idempotent on the derived key.
 * </ul>
 */
final class CrashTables {
  /** Bounds every business statement: a lock held by a dead session must not hang a test. */
  static final int STATEMENT_TIMEOUT_SECONDS = 10;

  private CrashTables() {}

  /** A payment row. */
  record Payment(String id, String idemKey, long amount, String status, String chargeId) {}

  /** What the fake provider saw for one derived key. */
  record ExternalCharge(String derivedKey, int calls, int effects, String chargeId) {}

  static void create(DataSource ds, JdbcDialect dialect) throws SQLException {
    String engine = dialect == JdbcDialect.MARIADB ? " ENGINE=InnoDB" : "";
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS idem_crash_effect (marker VARCHAR(255) NOT NULL PRIMARY KEY,"
          + " produced_by VARCHAR(64) NOT NULL)" + engine);
      st.execute("CREATE TABLE IF NOT EXISTS idem_crash_payment (id VARCHAR(64) NOT NULL PRIMARY KEY,"
          + " idem_key VARCHAR(255) NOT NULL, amount BIGINT NOT NULL, status VARCHAR(16) NOT NULL,"
          + " charge_id VARCHAR(64))" + engine);
      st.execute("CREATE TABLE IF NOT EXISTS idem_crash_external (derived_key VARCHAR(255) NOT NULL PRIMARY KEY,"
          + " calls INT NOT NULL, effects INT NOT NULL, charge_id VARCHAR(64) NOT NULL, amount BIGINT NOT NULL)"
          + engine);
    }
  }

  // ---------------------------------------------------------------- atomic scenario

  static void insertEffect(Connection c, String marker, String producedBy) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO idem_crash_effect (marker, produced_by) VALUES (?, ?)")) {
      ps.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
      ps.setString(1, marker);
      ps.setString(2, producedBy);
      ps.executeUpdate();
    }
  }

  /** Rows for the marker as this connection sees them (inside a transaction: including its own writes). */
  static int countEffects(Connection c, String marker) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM idem_crash_effect WHERE marker = ?")) {
      ps.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
      ps.setString(1, marker);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** Committed rows for the marker. */
  static int countEffects(DataSource ds, String marker) throws SQLException {
    try (Connection c = ds.getConnection()) {
      return countEffects(c, marker);
    }
  }

  // ---------------------------------------------------------------- phased scenario

  static void insertPendingPayment(Connection c, String id, String idemKey, long amount) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO idem_crash_payment (id, idem_key, amount, status) VALUES (?, ?, ?, 'pending')")) {
      ps.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
      ps.setString(1, id);
      ps.setString(2, idemKey);
      ps.setLong(3, amount);
      ps.executeUpdate();
    }
  }

  /** Marks a pending payment captured; a payment that is not pending (captured twice) is an error. */
  static void capturePayment(Connection c, String id, String chargeId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE idem_crash_payment SET status = 'captured', charge_id = ? WHERE id = ? AND status = 'pending'")) {
      ps.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
      ps.setString(1, chargeId);
      ps.setString(2, id);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException("payment " + id + " is not pending: captured twice, or never created");
      }
    }
  }

  static List<Payment> paymentsFor(DataSource ds, String idemKey) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT id, idem_key, amount, status, charge_id FROM idem_crash_payment WHERE idem_key = ? ORDER BY id")) {
      ps.setString(1, idemKey);
      List<Payment> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new Payment(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getString(4), rs.getString(5)));
        }
      }
      return out;
    }
  }

  static Optional<ExternalCharge> externalCharge(DataSource ds, String derivedKey) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT derived_key, calls, effects, charge_id FROM idem_crash_external WHERE derived_key = ?")) {
      ps.setString(1, derivedKey);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? Optional.of(new ExternalCharge(rs.getString(1), rs.getInt(2), rs.getInt(3), rs.getString(4)))
            : Optional.empty();
      }
    }
  }
}
