package dev.idem.examples.payments.payment;

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
 * The {@code pay_payment} table. Writes run on the connection of the caller's transaction (a phase's); reads of
 * committed state use their own connection. Every write increments {@code version}, the payment's ETag, so that a
 * client's {@code If-Match} fails after any change it has not seen. Thread-safe.
 */
@Repository
public class Payments {
  private static final String COLUMNS = "SELECT id, tenant, account_id, amount, currency, description, status,"
      + " provider_charge_id, refunded_amount, created_at, metadata, version FROM pay_payment";

  private final DataSource dataSource;

  public Payments(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  public void insert(Connection c, Payment p) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO pay_payment (id, tenant, account_id, amount,"
        + " currency, description, status, provider_charge_id, refunded_amount, created_at, updated_at)"
        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      ps.setString(1, p.id());
      ps.setString(2, p.tenant());
      ps.setString(3, p.accountId());
      ps.setLong(4, p.amount());
      ps.setString(5, p.currency());
      ps.setString(6, p.description());
      ps.setString(7, p.status());
      ps.setString(8, p.providerChargeId());
      ps.setLong(9, p.refundedAmount());
      ps.setLong(10, p.createdAt().toEpochMilli());
      ps.setLong(11, p.createdAt().toEpochMilli());
      ps.executeUpdate();
    }
  }

  /** The committed payment, if it belongs to the tenant. */
  public Optional<Payment> find(String tenant, String id) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return find(c, tenant, id, false);
    }
  }

  /** The payment on the caller's connection. */
  public Optional<Payment> find(Connection c, String tenant, String id) throws SQLException {
    return find(c, tenant, id, false);
  }

  /**
   * The payment, locked until the caller's transaction ends ({@code SELECT ... FOR UPDATE}), so that concurrent
   * refunds of one payment take turns.
   */
  public Optional<Payment> lock(Connection c, String tenant, String id) throws SQLException {
    return find(c, tenant, id, true);
  }

  /**
   * Marks the payment failed if it is still pending; returns whether it was. Safe to repeat: a reconciler that calls
   * it again after a crash changes nothing.
   */
  public boolean failIfPending(Connection c, String id, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE pay_payment SET status = ?, updated_at = ?,"
        + " version = version + 1 WHERE id = ? AND status = ?")) {
      ps.setString(1, Payment.FAILED);
      ps.setLong(2, now.toEpochMilli());
      ps.setString(3, id);
      ps.setString(4, Payment.PENDING);
      return ps.executeUpdate() == 1;
    }
  }

  /** Moves a pending payment to a final status with the provider's charge. */
  public void settle(Connection c, String id, String status, String providerChargeId, Instant now)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE pay_payment SET status = ?, provider_charge_id = ?,"
        + " updated_at = ?, version = version + 1 WHERE id = ? AND status = ?")) {
      ps.setString(1, status);
      ps.setString(2, providerChargeId);
      ps.setLong(3, now.toEpochMilli());
      ps.setString(4, id);
      ps.setString(5, Payment.PENDING);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException("payment " + id + " is not pending; cannot mark it " + status);
      }
    }
  }

  /** Adds a refund's amount to the refunded amount (the caller holds the {@link #lock}). */
  public void reserveRefund(Connection c, String id, long amount, Instant now) throws SQLException {
    changeRefunded(c, id, amount, now);
  }

  /** Gives back a refund's reserved amount, when the provider refused the refund for good. */
  public void releaseRefund(Connection c, String id, long amount, Instant now) throws SQLException {
    changeRefunded(c, id, -amount, now);
  }

  /** Adds {@code delta} to the refunded amount of a captured payment, keeping it within 0 and the amount. */
  private static void changeRefunded(Connection c, String id, long delta, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE pay_payment SET refunded_amount = refunded_amount + ?,"
        + " updated_at = ?, version = version + 1 WHERE id = ? AND status = ?"
        + " AND refunded_amount + ? >= 0 AND refunded_amount + ? <= amount")) {
      ps.setLong(1, delta);
      ps.setLong(2, now.toEpochMilli());
      ps.setString(3, id);
      ps.setString(4, Payment.CAPTURED);
      ps.setLong(5, delta);
      ps.setLong(6, delta);
      if (ps.executeUpdate() != 1) {
        throw new IllegalStateException("payment " + id + " cannot change its refunded amount by " + delta);
      }
    }
  }

  /**
   * Applies a change if the payment's version satisfies {@code expected}: the check and the write are one
   * {@code UPDATE}, so of two clients that send the same {@code If-Match} exactly one changes the row. The changed
   * payment is read back in the same transaction.
   *
   * @return the changed payment; empty when the payment does not exist for the tenant or its version does not
   *     satisfy {@code expected} (nothing changed)
   */
  public Optional<Payment> change(String tenant, String id, PaymentChange change, VersionCondition expected,
      Instant now) throws SQLException {
    StringBuilder sql = new StringBuilder("UPDATE pay_payment SET ");
    if (change.changesDescription()) {
      sql.append("description = ?, ");
    }
    if (change.changesMetadata()) {
      sql.append("metadata = ?, ");
    }
    sql.append("updated_at = ?, version = version + 1 WHERE id = ? AND tenant = ?").append(expected.sql("version"));
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        int rows;
        try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
          int i = 1;
          if (change.changesDescription()) {
            ps.setString(i++, change.description());
          }
          if (change.changesMetadata()) {
            ps.setString(i++, Metadata.toColumn(change.metadata()));
          }
          ps.setLong(i++, now.toEpochMilli());
          ps.setString(i++, id);
          ps.setString(i++, tenant);
          VersionParameters.bind(ps, i, expected.parameters());
          rows = ps.executeUpdate();
        }
        Optional<Payment> changed = rows == 1 ? find(c, tenant, id, false) : Optional.empty();
        c.commit();
        return changed;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  private static Optional<Payment> find(Connection c, String tenant, String id, boolean forUpdate)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(COLUMNS + " WHERE id = ? AND tenant = ?"
        + (forUpdate ? " FOR UPDATE" : ""))) {
      ps.setString(1, id);
      ps.setString(2, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(new Payment(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4),
            rs.getString(5).trim(), rs.getString(6), rs.getString(7), rs.getString(8), rs.getLong(9),
            Instant.ofEpochMilli(rs.getLong(10)), Metadata.fromColumn(rs.getString(11)), rs.getLong(12)));
      }
    }
  }
}
