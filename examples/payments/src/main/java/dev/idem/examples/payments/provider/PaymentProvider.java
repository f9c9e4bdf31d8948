package dev.idem.examples.payments.provider;

import dev.idem.examples.payments.ResourceId;
import dev.idem.examples.payments.web.PaymentsProblems;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The simulated payment provider: an external system that happens to live in this process. It keeps its state in
 * its own tables ({@code pay_provider_charge}, {@code pay_provider_refund}) and commits each call in its own
 * transaction on its own connection, never in the caller's, so that what it applied survives whatever happens to
 * the caller (a rollback, a kill -9). Like a real provider it is idempotent on the key each call carries: a
 * repeated key returns the original charge or refund, applies nothing, and counts a duplicate attempt. Faults come
 * from {@link FaultInjection}. Thread-safe.
 *
 * <p>Accounts whose id starts with {@code acct_declined} are declined: the charge is recorded with status
 * {@code declined} and moves no money.
 *
 * <p>A new succeeded charge or refund also writes a {@code charge.succeeded} or {@code refund.succeeded} webhook to
 * the outbox in the same transaction (see {@link ProviderWebhooks}); a repeated key writes none.
 */
public final class PaymentProvider {
  /** Account ids with this prefix are declined. */
  public static final String DECLINED_ACCOUNT_PREFIX = "acct_declined";

  private static final int MAX_ATTEMPTS = 3;

  private final DataSource dataSource;
  private final FaultInjection faults;
  private final Clock clock;
  private final ProviderWebhooks webhooks;

  /** A provider that sends no webhooks. */
  public PaymentProvider(DataSource dataSource, FaultInjection faults, Clock clock) {
    this(dataSource, faults, clock, ProviderWebhooks.none());
  }

  public PaymentProvider(DataSource dataSource, FaultInjection faults, Clock clock, ProviderWebhooks webhooks) {
    this.dataSource = dataSource;
    this.faults = faults;
    this.clock = clock;
    this.webhooks = webhooks;
  }

  /** A charge and whether the key had been seen before (so nothing was applied this time). */
  record Charged(ProviderCharge charge, boolean replayed) {}

  /** A refund and whether the key had been seen before. */
  record Refunded(ProviderRefund refund, boolean replayed) {}

  /**
   * Charges the account, once per key.
   *
   * @throws ProviderUnavailableException nothing was applied
   * @throws ProviderTimeoutException the charge may have been applied; call again with the same key
   * @throws ProviderRejectedException the key was used before with other parameters
   */
  public ProviderCharge charge(String idempotencyKey, ChargeRequest request) throws ProviderException {
    return charged(idempotencyKey, request).charge();
  }

  Charged charged(String idempotencyKey, ChargeRequest request) throws ProviderException {
    checkKey(idempotencyKey);
    faults.beforeCall("charge");
    Charged charged = withRetries(c -> chargeOnce(c, idempotencyKey, request));
    faults.afterCommit("charge");
    return charged;
  }

  /**
   * Refunds part or all of a succeeded charge, once per key.
   *
   * @throws ProviderUnavailableException nothing was applied
   * @throws ProviderTimeoutException the refund may have been applied; call again with the same key
   * @throws ProviderRejectedException unknown or declined charge, more than the charge has left, or the key was used
   *     before with other parameters
   */
  public ProviderRefund refund(String idempotencyKey, RefundRequest request) throws ProviderException {
    return refunded(idempotencyKey, request).refund();
  }

  Refunded refunded(String idempotencyKey, RefundRequest request) throws ProviderException {
    checkKey(idempotencyKey);
    faults.beforeCall("refund");
    Refunded refunded = withRetries(c -> refundOnce(c, idempotencyKey, request));
    faults.afterCommit("refund");
    return refunded;
  }

  /**
   * The charge made with this idempotency key, if any: how a caller whose charge went unanswered finds out whether it
   * took effect. Fails like a call while the provider is down ({@link FaultInjection#beforeCall}).
   *
   * @throws ProviderUnavailableException the provider could not be asked; nothing is known
   */
  public Optional<ProviderCharge> chargeByKey(String idempotencyKey) throws ProviderUnavailableException {
    checkKey(idempotencyKey);
    faults.beforeCall("charge look-up");
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement(CHARGE_COLUMNS + " WHERE idempotency_key = ?")) {
        ps.setString(1, idempotencyKey);
        return one(ps, PaymentProvider::charge);
      }
    });
  }

  /** The refund made with this idempotency key, if any; see {@link #chargeByKey}. */
  public Optional<ProviderRefund> refundByKey(String idempotencyKey) throws ProviderUnavailableException {
    checkKey(idempotencyKey);
    faults.beforeCall("refund look-up");
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement(REFUND_COLUMNS + " WHERE idempotency_key = ?")) {
        ps.setString(1, idempotencyKey);
        return one(ps, PaymentProvider::refund);
      }
    });
  }

  public Optional<ProviderCharge> findCharge(String id) {
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement(CHARGE_COLUMNS + " WHERE id = ?")) {
        ps.setString(1, id);
        return one(ps, PaymentProvider::charge);
      }
    });
  }

  public Optional<ProviderRefund> findRefund(String id) {
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement(REFUND_COLUMNS + " WHERE id = ?")) {
        ps.setString(1, id);
        return one(ps, PaymentProvider::refund);
      }
    });
  }

  /** The charges of an account, oldest first, at most {@code limit}. */
  public List<ProviderCharge> chargesOf(String accountId, int limit) {
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement(CHARGE_COLUMNS
          + " WHERE account_id = ? ORDER BY created_at, id LIMIT ?")) {
        ps.setString(1, accountId);
        ps.setInt(2, limit);
        List<ProviderCharge> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            out.add(charge(rs));
          }
        }
        return out;
      }
    });
  }

  public ProviderStats stats() {
    return read(c -> {
      long charges;
      long declined;
      long duplicateCharges;
      try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*),"
          + " COALESCE(SUM(CASE WHEN status = 'declined' THEN 1 ELSE 0 END), 0),"
          + " COALESCE(SUM(duplicate_attempts), 0) FROM pay_provider_charge");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        charges = rs.getLong(1);
        declined = rs.getLong(2);
        duplicateCharges = rs.getLong(3);
      }
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT COUNT(*), COALESCE(SUM(duplicate_attempts), 0) FROM pay_provider_refund");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new ProviderStats(charges, declined, rs.getLong(1), duplicateCharges, rs.getLong(2));
      }
    });
  }

  public FaultInjection faults() {
    return faults;
  }

  // ---------------------------------------------------------------- one call, in the provider's own transaction

  private static final String CHARGE_COLUMNS =
      "SELECT id, account_id, amount, currency, status, created_at FROM pay_provider_charge";
  private static final String REFUND_COLUMNS =
      "SELECT id, charge_id, amount, status, created_at FROM pay_provider_refund";

  private Charged chargeOnce(Connection c, String key, ChargeRequest request) throws SQLException,
      ProviderRejectedException {
    Optional<ProviderCharge> existing;
    try (PreparedStatement ps = c.prepareStatement(CHARGE_COLUMNS + " WHERE idempotency_key = ? FOR UPDATE")) {
      ps.setString(1, key);
      existing = one(ps, PaymentProvider::charge);
    }
    if (existing.isPresent()) {
      ProviderCharge charge = existing.get();
      if (!charge.accountId().equals(request.accountId()) || charge.amount() != request.amount()
          || !charge.currency().equals(request.currency())) {
        throw new ProviderRejectedException(PaymentsProblems.PROVIDER_KEY_REUSED, "charge key " + key
            + " was used for charge " + charge.id() + " with other parameters");
      }
      countDuplicate(c, "pay_provider_charge", key);
      return new Charged(charge, true);
    }
    faults.refuseNewCall("charge");
    String status = request.accountId().startsWith(DECLINED_ACCOUNT_PREFIX)
        ? ProviderCharge.DECLINED : ProviderCharge.SUCCEEDED;
    ProviderCharge charge = new ProviderCharge(ResourceId.next("ch"), request.accountId(), request.amount(),
        request.currency(), status, now());
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO pay_provider_charge (idempotency_key, id,"
        + " account_id, amount, currency, status, duplicate_attempts, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)")) {
      ps.setString(1, key);
      ps.setString(2, charge.id());
      ps.setString(3, charge.accountId());
      ps.setLong(4, charge.amount());
      ps.setString(5, charge.currency());
      ps.setString(6, charge.status());
      ps.setLong(7, charge.createdAt().toEpochMilli());
      ps.executeUpdate();
    }
    if (!charge.declined()) {
      webhooks.chargeSucceeded(c, charge);
    }
    return new Charged(charge, false);
  }

  private Refunded refundOnce(Connection c, String key, RefundRequest request) throws SQLException,
      ProviderRejectedException {
    Optional<ProviderRefund> existing;
    try (PreparedStatement ps = c.prepareStatement(REFUND_COLUMNS + " WHERE idempotency_key = ? FOR UPDATE")) {
      ps.setString(1, key);
      existing = one(ps, PaymentProvider::refund);
    }
    if (existing.isPresent()) {
      ProviderRefund refund = existing.get();
      if (!refund.chargeId().equals(request.chargeId()) || refund.amount() != request.amount()) {
        throw new ProviderRejectedException(PaymentsProblems.PROVIDER_KEY_REUSED, "refund key " + key
            + " was used for refund " + refund.id() + " with other parameters");
      }
      countDuplicate(c, "pay_provider_refund", key);
      return new Refunded(refund, true);
    }
    faults.refuseNewCall("refund");
    Optional<ProviderCharge> charge;
    try (PreparedStatement ps = c.prepareStatement(CHARGE_COLUMNS + " WHERE id = ? FOR UPDATE")) {
      ps.setString(1, request.chargeId());
      charge = one(ps, PaymentProvider::charge);
    }
    if (charge.isEmpty() || charge.get().declined()) {
      throw new ProviderRejectedException(PaymentsProblems.PROVIDER_CHARGE_NOT_REFUNDABLE, "charge "
          + request.chargeId() + (charge.isEmpty() ? " does not exist" : " was declined"));
    }
    long refunded;
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT COALESCE(SUM(amount), 0) FROM pay_provider_refund WHERE charge_id = ?")) {
      ps.setString(1, request.chargeId());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        refunded = rs.getLong(1);
      }
    }
    if (refunded + request.amount() > charge.get().amount()) {
      throw new ProviderRejectedException(PaymentsProblems.PROVIDER_REFUND_EXCEEDS_CHARGE, "charge "
          + request.chargeId() + " has " + (charge.get().amount() - refunded) + " left to refund, asked for "
          + request.amount());
    }
    ProviderRefund refund = new ProviderRefund(ResourceId.next("re"), request.chargeId(), request.amount(),
        ProviderRefund.SUCCEEDED, now());
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO pay_provider_refund (idempotency_key, id, charge_id,"
        + " amount, status, duplicate_attempts, created_at) VALUES (?, ?, ?, ?, ?, 0, ?)")) {
      ps.setString(1, key);
      ps.setString(2, refund.id());
      ps.setString(3, refund.chargeId());
      ps.setLong(4, refund.amount());
      ps.setString(5, refund.status());
      ps.setLong(6, refund.createdAt().toEpochMilli());
      ps.executeUpdate();
    }
    webhooks.refundSucceeded(c, refund);
    return new Refunded(refund, false);
  }

  private static void countDuplicate(Connection c, String table, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE " + table + " SET duplicate_attempts = duplicate_attempts + 1 WHERE idempotency_key = ?")) {
      ps.setString(1, key);
      ps.executeUpdate();
    }
  }

  // ---------------------------------------------------------------- plumbing

  private interface Work<T> {
    T run(Connection c) throws SQLException, ProviderRejectedException;
  }

  private interface Read<T> {
    T run(Connection c) throws SQLException;
  }

  private interface Row<T> {
    T read(ResultSet rs) throws SQLException;
  }

  /**
   * Runs one call in its own transaction. Two first calls with one key race to insert it: the primary key lets one
   * win, and the loser runs again and finds the winner's row.
   */
  private <T> T withRetries(Work<T> work) throws ProviderException {
    for (int attempt = 1; ; attempt++) {
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        try {
          T result = work.run(c);
          c.commit();
          return result;
        } catch (SQLException | ProviderRejectedException | RuntimeException e) {
          c.rollback();
          throw e;
        } finally {
          c.setAutoCommit(true);
        }
      } catch (SQLException e) {
        if (attempt < MAX_ATTEMPTS && isRetryable(e)) {
          continue;
        }
        ProviderUnavailableException unavailable =
            new ProviderUnavailableException("the provider's database failed: " + e.getMessage());
        unavailable.initCause(e);
        throw unavailable;
      }
    }
  }

  private <T> T read(Read<T> work) {
    try (Connection c = dataSource.getConnection()) {
      return work.run(c);
    } catch (SQLException e) {
      throw new IllegalStateException("provider: reading its tables failed: " + e.getMessage(), e);
    }
  }

  /** Unique violations (a concurrent first call with the same key), deadlocks and serialization failures. */
  private static boolean isRetryable(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("23") || state.startsWith("40"));
  }

  private static void checkKey(String key) {
    if (key == null || key.isEmpty() || key.length() > 255) {
      throw new IllegalArgumentException("a provider idempotency key must be 1 to 255 characters");
    }
  }

  private static <T> Optional<T> one(PreparedStatement ps, Row<T> row) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      return rs.next() ? Optional.of(row.read(rs)) : Optional.empty();
    }
  }

  private static ProviderCharge charge(ResultSet rs) throws SQLException {
    return new ProviderCharge(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getString(4).trim(),
        rs.getString(5), Instant.ofEpochMilli(rs.getLong(6)));
  }

  private static ProviderRefund refund(ResultSet rs) throws SQLException {
    return new ProviderRefund(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getString(4),
        Instant.ofEpochMilli(rs.getLong(5)));
  }

  private Instant now() {
    return Instant.ofEpochMilli(clock.millis());
  }
}
