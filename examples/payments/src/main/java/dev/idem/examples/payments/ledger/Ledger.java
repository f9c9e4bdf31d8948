package dev.idem.examples.payments.ledger;

import dev.idem.examples.payments.ResourceId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.stereotype.Repository;

/**
 * The double-entry ledger ({@code pay_ledger_entry}). A captured payment books one pair (debit the customer's
 * account, credit the tenant's merchant account), a refund the reverse pair. The unique constraint on
 * (reference, direction) makes a second pair for the same payment or refund impossible. Thread-safe.
 */
@Repository
public class Ledger {
  /** The reference type of a payment's entries. */
  public static final String PAYMENT = "payment";
  /** The reference type of a refund's entries. */
  public static final String REFUND = "refund";

  private final DataSource dataSource;

  public Ledger(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** The merchant account of a tenant: the account its customers pay into. */
  public static String merchantAccount(String tenant) {
    return "merchant:" + tenant;
  }

  /** Books a captured payment, on the caller's transaction. */
  public void bookPayment(Connection c, String tenant, String paymentId, String customerAccount, long amount,
      String currency, Instant now) throws SQLException {
    book(c, tenant, PAYMENT, paymentId, customerAccount, merchantAccount(tenant), amount, currency, now);
  }

  /** Books a succeeded refund, on the caller's transaction. */
  public void bookRefund(Connection c, String tenant, String refundId, String customerAccount, long amount,
      String currency, Instant now) throws SQLException {
    book(c, tenant, REFUND, refundId, merchantAccount(tenant), customerAccount, amount, currency, now);
  }

  private static void book(Connection c, String tenant, String type, String reference, String debit, String credit,
      long amount, String currency, Instant now) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO pay_ledger_entry (id, tenant, account_id, direction,"
        + " amount, currency, reference_type, reference_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      for (String[] side : new String[][] {{LedgerEntry.DEBIT, debit}, {LedgerEntry.CREDIT, credit}}) {
        ps.setString(1, ResourceId.next("le"));
        ps.setString(2, tenant);
        ps.setString(3, side[1]);
        ps.setString(4, side[0]);
        ps.setLong(5, amount);
        ps.setString(6, currency);
        ps.setString(7, type);
        ps.setString(8, reference);
        ps.setLong(9, now.toEpochMilli());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  public LedgerSummary summary(String tenant) throws SQLException {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT"
        + " COALESCE(SUM(CASE WHEN reference_type = 'payment' AND direction = 'credit' THEN 1 ELSE 0 END), 0),"
        + " COALESCE(SUM(CASE WHEN reference_type = 'payment' AND direction = 'credit' THEN amount ELSE 0 END), 0),"
        + " COALESCE(SUM(CASE WHEN reference_type = 'refund' AND direction = 'debit' THEN 1 ELSE 0 END), 0),"
        + " COALESCE(SUM(CASE WHEN reference_type = 'refund' AND direction = 'debit' THEN amount ELSE 0 END), 0),"
        + " COUNT(*),"
        + " COALESCE(SUM(CASE WHEN direction = 'debit' THEN amount ELSE -amount END), 0)"
        + " FROM pay_ledger_entry WHERE tenant = ?")) {
      ps.setString(1, tenant);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new LedgerSummary(rs.getLong(1), rs.getLong(3), rs.getLong(2), rs.getLong(4), rs.getLong(5),
            rs.getLong(6) == 0);
      }
    }
  }

  /** A tenant's entries, oldest first, optionally of one account, at most {@code limit}. */
  public List<LedgerEntry> entries(String tenant, String accountId, int limit) throws SQLException {
    String sql = "SELECT id, tenant, account_id, direction, amount, currency, reference_type, reference_id,"
        + " created_at FROM pay_ledger_entry WHERE tenant = ?" + (accountId == null ? "" : " AND account_id = ?")
        + " ORDER BY created_at, reference_id, direction LIMIT ?";
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      int i = 1;
      ps.setString(i++, tenant);
      if (accountId != null) {
        ps.setString(i++, accountId);
      }
      ps.setInt(i, limit);
      List<LedgerEntry> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new LedgerEntry(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
              rs.getLong(5), rs.getString(6).trim(), rs.getString(7), rs.getString(8),
              Instant.ofEpochMilli(rs.getLong(9))));
        }
      }
      return out;
    }
  }
}
