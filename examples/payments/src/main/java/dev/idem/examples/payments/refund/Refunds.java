package dev.idem.examples.payments.refund;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.stereotype.Repository;

/** The {@code pay_refund} table; writes on the caller's transaction, reads on their own connection. Thread-safe. */
@Repository
public class Refunds {
  private static final String COLUMNS = "SELECT id, tenant, payment_id, amount, currency, status, provider_refund_id,"
      + " created_at FROM pay_refund";

  private final DataSource dataSource;

  public Refunds(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  public void insert(Connection c, Refund r) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO pay_refund (id, tenant, payment_id, amount, currency,"
        + " status, provider_refund_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      ps.setString(1, r.id());
      ps.setString(2, r.tenant());
      ps.setString(3, r.paymentId());
      ps.setLong(4, r.amount());
      ps.setString(5, r.currency());
      ps.setString(6, r.status());
      ps.setString(7, r.providerRefundId());
      ps.setLong(8, r.createdAt().toEpochMilli());
      ps.setLong(9, r.createdAt().toEpochMilli());
      ps.executeUpdate();
    }
  }

  /** Marks a pending refund succeeded with the provider's refund. */
  public void succeed(Connection c, String id, String providerRefundId, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE pay_refund SET status = ?, provider_refund_id = ?,"
        + " updated_at = ? WHERE id = ? AND status = ?")) {
      ps.setString(1, Refund.SUCCEEDED);
      ps.setString(2, providerRefundId);
      ps.setLong(3, now.toEpochMilli());
      ps.setString(4, id);
      ps.setString(5, Refund.PENDING);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException("refund " + id + " is not pending; cannot mark it succeeded");
      }
    }
  }

  /** Marks the refund failed if it is still pending; returns whether it was. Safe to repeat. */
  public boolean failIfPending(Connection c, String id, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE pay_refund SET status = ?, updated_at = ?"
        + " WHERE id = ? AND status = ?")) {
      ps.setString(1, Refund.FAILED);
      ps.setLong(2, now.toEpochMilli());
      ps.setString(3, id);
      ps.setString(4, Refund.PENDING);
      return ps.executeUpdate() == 1;
    }
  }

  /** Marks a pending refund failed: the provider refused it for good. */
  public void fail(Connection c, String id, Instant now) throws SQLException {
    if (!failIfPending(c, id, now)) {
      throw new IllegalStateException("refund " + id + " is not pending; cannot mark it failed");
    }
  }

  /** The committed refund, if it belongs to the tenant. */
  public Optional<Refund> find(String tenant, String id) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return find(c, tenant, id);
    }
  }

  public Optional<Refund> find(Connection c, String tenant, String id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(COLUMNS + " WHERE id = ? AND tenant = ?")) {
      ps.setString(1, id);
      ps.setString(2, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new Refund(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4),
            rs.getString(5).trim(), rs.getString(6), rs.getString(7), Instant.ofEpochMilli(rs.getLong(8))));
      }
    }
  }
}
