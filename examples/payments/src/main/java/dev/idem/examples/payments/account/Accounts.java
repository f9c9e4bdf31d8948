package dev.idem.examples.payments.account;

import dev.idem.examples.payments.payment.Metadata;
import dev.idem.jdbc.VersionParameters;
import dev.idem.servlet.conditional.VersionCondition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.stereotype.Repository;

/**
 * The {@code pay_account} table, keyed by tenant and id. Each conditional write is one statement: a create is an
 * {@code INSERT} that the primary key refuses when the account exists (so two concurrent creates cannot both win),
 * and a replacement is an {@code UPDATE} whose {@code WHERE} holds the expected version. Thread-safe.
 */
@Repository
public class Accounts {
  private static final String COLUMNS = "SELECT tenant, id, name, email, metadata, version, created_at, updated_at"
      + " FROM pay_account";

  private final DataSource dataSource;

  public Accounts(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * Creates the account, version 1, unless the tenant already has one with this id.
   *
   * @return the account; empty when it exists already (nothing changed)
   */
  public Optional<Account> create(String tenant, String id, AccountProfile profile, Instant now)
      throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO pay_account (tenant, id, name, email, metadata,"
            + " version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)")) {
      ps.setString(1, tenant);
      ps.setString(2, id);
      ps.setString(3, profile.name());
      ps.setString(4, profile.email());
      ps.setString(5, Metadata.toColumn(profile.metadata()));
      ps.setLong(6, now.toEpochMilli());
      ps.setLong(7, now.toEpochMilli());
      ps.executeUpdate();
      return Optional.of(new Account(tenant, id, profile.name(), profile.email(), profile.metadata(), 1, now, now));
    } catch (SQLException e) {
      if (isDuplicateKey(e)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /**
   * Replaces the profile if the account exists and its version satisfies {@code expected}, in one {@code UPDATE}
   * that also increments the version; the new state is read back in the same transaction.
   *
   * @return the replaced account; empty when it does not exist or its version does not satisfy {@code expected}
   */
  public Optional<Account> replace(String tenant, String id, AccountProfile profile, VersionCondition expected,
      Instant now) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        int rows;
        try (PreparedStatement ps = c.prepareStatement("UPDATE pay_account SET name = ?, email = ?, metadata = ?,"
            + " updated_at = ?, version = version + 1 WHERE tenant = ? AND id = ?" + expected.sql("version"))) {
          ps.setString(1, profile.name());
          ps.setString(2, profile.email());
          ps.setString(3, Metadata.toColumn(profile.metadata()));
          ps.setLong(4, now.toEpochMilli());
          ps.setString(5, tenant);
          ps.setString(6, id);
          VersionParameters.bind(ps, 7, expected.parameters());
          rows = ps.executeUpdate();
        }
        Optional<Account> replaced = rows == 1 ? find(c, tenant, id) : Optional.empty();
        c.commit();
        return replaced;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /** The committed account, if the tenant has one with this id. */
  public Optional<Account> find(String tenant, String id) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return find(c, tenant, id);
    }
  }

  private static Optional<Account> find(Connection c, String tenant, String id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(COLUMNS + " WHERE tenant = ? AND id = ?")) {
      ps.setString(1, tenant);
      ps.setString(2, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new Account(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
            Metadata.fromColumn(rs.getString(5)), rs.getLong(6), Instant.ofEpochMilli(rs.getLong(7)),
            Instant.ofEpochMilli(rs.getLong(8))));
      }
    }
  }

  /** A unique or primary key violation: SQLState 23505 (H2, PostgreSQL) or MariaDB's error 1062. */
  private static boolean isDuplicateKey(SQLException e) {
    for (SQLException x = e; x != null; x = x.getNextException()) {
      if ("23505".equals(x.getSQLState()) || x.getErrorCode() == 1062) {
        return true;
      }
    }
    return false;
  }
}
