package dev.idem.jdbc.crash;

import dev.idem.jdbc.JdbcDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * A payment provider that is idempotent on its keys, as real ones are: every call counts in {@code calls}; only the
 * first call with a key has an effect ({@code effects = 1}) and mints the charge id, and later calls with that key get
 * the original charge back. Each call is one statement in its own auto-commit transaction, so it is committed before
 * the caller's phase commits: exactly the window a crash test needs.
 */
final class FakePaymentProvider {
  private final DataSource dataSource;
  private final String upsert;

  FakePaymentProvider(DataSource dataSource, JdbcDialect dialect) {
    this.dataSource = dataSource;
    switch (dialect) {
      case POSTGRESQL:
        upsert = "INSERT INTO idem_crash_external (derived_key, calls, effects, charge_id, amount)"
            + " VALUES (?, 1, 1, ?, ?) ON CONFLICT (derived_key) DO UPDATE SET calls = idem_crash_external.calls + 1";
        break;
      case MARIADB:
        upsert = "INSERT INTO idem_crash_external (derived_key, calls, effects, charge_id, amount)"
            + " VALUES (?, 1, 1, ?, ?) ON DUPLICATE KEY UPDATE calls = calls + 1";
        break;
      case H2:
        upsert = "MERGE INTO idem_crash_external t USING (VALUES (CAST(? AS VARCHAR(255)),"
            + " CAST(? AS VARCHAR(64)), CAST(? AS BIGINT))) s (derived_key, charge_id, amount)"
            + " ON t.derived_key = s.derived_key"
            + " WHEN MATCHED THEN UPDATE SET calls = t.calls + 1"
            + " WHEN NOT MATCHED THEN INSERT (derived_key, calls, effects, charge_id, amount)"
            + " VALUES (s.derived_key, 1, 1, s.charge_id, s.amount)";
        break;
      default:
        throw new IllegalArgumentException(String.valueOf(dialect));
    }
  }

  /** Charges {@code amount} under {@code derivedKey}; returns the charge id (the original one on a repeat). */
  String charge(String derivedKey, long amount) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      try (PreparedStatement ps = c.prepareStatement(upsert)) {
        ps.setQueryTimeout(CrashTables.STATEMENT_TIMEOUT_SECONDS);
        ps.setString(1, derivedKey);
        ps.setString(2, "ch_" + UUID.randomUUID());
        ps.setLong(3, amount);
        ps.executeUpdate();
      }
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT charge_id FROM idem_crash_external WHERE derived_key = ?")) {
        ps.setString(1, derivedKey);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new IllegalStateException("the provider lost charge " + derivedKey);
          }
          return rs.getString(1);
        }
      }
    }
  }
}
