package dev.idem.examples.payments.refund;

import dev.idem.core.Checkpoint;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.PhaseContext;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.Reconciler;
import dev.idem.core.StoredResponse;
import dev.idem.examples.payments.ResourceId;
import dev.idem.examples.payments.ledger.Ledger;
import dev.idem.examples.payments.outbox.TenantEvents;
import dev.idem.examples.payments.payment.Payment;
import dev.idem.examples.payments.payment.Payments;
import dev.idem.examples.payments.provider.ProviderClient;
import dev.idem.examples.payments.provider.ProviderException;
import dev.idem.examples.payments.provider.ProviderRefund;
import dev.idem.examples.payments.provider.ProviderRejectedException;
import dev.idem.examples.payments.provider.ProviderTimeoutException;
import dev.idem.examples.payments.provider.ProviderUnavailableException;
import dev.idem.examples.payments.provider.RefundRequest;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.PaymentsProblems;
import dev.idem.examples.payments.web.ProblemResponse;
import dev.idem.examples.payments.webhook.EventTypes;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.servlet.Problem;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * {@code POST /refunds} as a phased operation:
 *
 * <ol>
 *   <li>{@code reserve}, in a transaction: lock the payment row ({@code SELECT ... FOR UPDATE}), check that it is
 *       the caller's (404, kept), not still being charged (409, not kept), captured and with enough left (422,
 *       kept), and reserve the amount on it. Concurrent refunds of one payment, whatever their keys, take turns on
 *       the lock, so together they can never exceed it;
 *   <li>{@code refund}, outside: the provider refund through the {@link ProviderClient} (outages retried a few
 *       times within the request's deadline) with the key derived from the record (504/503 not kept: the retry
 *       resumes here); a refusal for good ({@link ProviderRejectedException}) ends the operation with the provider's
 *       422 problem, kept and not retryable, after {@link #release} gave the reserved amount back to the payment
 *       and marked the refund {@code failed}: a later refund of that amount succeeds;
 *   <li>{@code complete}, in a transaction: mark the refund succeeded, write {@code refund.succeeded} to the outbox,
 *       book the reverse ledger pair, answer 201.
 * </ol>
 *
 * Thread-safe.
 */
public final class RefundPhases {
  /** The operation: method and route template of the handler. */
  public static final String OPERATION = "POST /refunds";

  private final Payments payments;
  private final Refunds refunds;
  private final Ledger ledger;
  private final ProviderClient provider;
  private final TenantEvents events;
  private final Json json;
  private final Clock clock;
  private final DataSource dataSource;

  /**
   * The phases over these collaborators; {@code provider} is the retrying client of the simulated provider, and
   * {@code dataSource} where the reconciler gives back the amount of a refund that was never made.
   */
  public RefundPhases(Payments payments, Refunds refunds, Ledger ledger, ProviderClient provider,
      TenantEvents events, Json json, Clock clock, DataSource dataSource) {
    this.dataSource = dataSource;
    this.payments = payments;
    this.refunds = refunds;
    this.ledger = ledger;
    this.provider = provider;
    this.events = events;
    this.json = json;
    this.clock = clock;
  }

  /** The phased operation {@code POST /refunds}, for Idem to register. */
  public PhasedOperation operation() {
    return PhasedOperation.builder(OPERATION)
        .inTransaction("reserve", this::reserve)
        .outsideRepeatable("refund", this::refund)
        .inTransaction("complete", this::complete)
        .onRefusal(this::release)
        .reconciler(this::reconcile)
        .build();
  }

  /**
   * Decides an uncertain refund by the provider's look-up of the refund's key: a refund found resumes the record
   * ({@code complete} books it); none found fails the refund and gives its reserved amount back to the payment, in
   * one transaction of its own and only if the refund is still pending (asking again changes nothing), and ends the
   * record with 422 {@code REFUND.not_made}.
   */
  Reconciler.Verdict reconcile(IdempotencyRecord record) throws Exception {
    if (provider.lookUpRefund(record.derive("refund")).isPresent()) {
      return Reconciler.Verdict.resume();
    }
    Checkpoint cp = record.checkpoint();
    String refundId = cp.require("refund_id");
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        Instant now = now();
        if (refunds.failIfPending(c, refundId, now)) {
          payments.releaseRefund(c, cp.require("payment_id"), Long.parseLong(cp.require("amount")), now);
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
    return Reconciler.Verdict.failed(ProblemResponse.of(Problem.of(PaymentsProblems.REFUND_NOT_MADE)
        .withDetail("the provider could not be reached for long, and reconciliation found that it never made refund "
            + refundId + "; the refund failed and its amount is refundable again")
        .with("refund_id", refundId).with("payment_id", cp.require("payment_id"))));
  }

  PhaseResult reserve(PhaseContext ctx) throws Exception {
    byte[] body = ctx.request().orElseThrow(() -> new IllegalStateException(
        "the reserve phase runs only for a client's request")).body();
    NewRefund request;
    try {
      request = NewRefund.parse(json.object(body));
    } catch (ApiProblem invalid) {
      return PhaseResult.respond(ProblemResponse.of(invalid.problem()));
    }
    String tenant = tenant(ctx);
    Connection c = connection(ctx);
    Optional<Payment> found = payments.lock(c, tenant, request.paymentId());
    if (found.isEmpty()) {
      return PhaseResult.respond(ProblemResponse.of(
          Problem.of(PaymentsProblems.PAYMENT_NOT_FOUND).withDetail("no payment " + request.paymentId())));
    }
    Payment payment = found.get();
    if (Payment.PENDING.equals(payment.status())) {
      return PhaseResult.respond(ProblemResponse.retryAfter(Problem.of(PaymentsProblems.PAYMENT_PENDING)
          .withDetail("payment " + payment.id() + " is still being charged; retry with the same Idempotency-Key")
          .with("payment_id", payment.id()), 1));
    }
    if (!Payment.CAPTURED.equals(payment.status())) {
      return PhaseResult.respond(ProblemResponse.of(Problem.of(PaymentsProblems.PAYMENT_NOT_REFUNDABLE)
          .withDetail("payment " + payment.id() + " is " + payment.status() + "; only captured payments are refunded")
          .with("payment_id", payment.id())));
    }
    if (request.amount() > payment.refundable()) {
      return PhaseResult.respond(ProblemResponse.of(Problem.of(PaymentsProblems.REFUND_EXCEEDS_PAYMENT)
          .withDetail("payment " + payment.id() + " has " + payment.refundable() + " " + payment.currency()
              + " (minor units) left to refund; asked for " + request.amount())
          .with("payment_id", payment.id()).with("refundable", payment.refundable())));
    }
    Instant now = now();
    payments.reserveRefund(c, payment.id(), request.amount(), now);
    Refund refund = new Refund(ResourceId.next("rf"), tenant, payment.id(), request.amount(), payment.currency(),
        Refund.PENDING, null, now);
    refunds.insert(c, refund);
    return PhaseResult.next(Checkpoint.of(Map.of(
        "refund_id", refund.id(),
        "payment_id", payment.id(),
        "account_id", payment.accountId(),
        "charge_id", payment.providerChargeId(),
        "amount", Long.toString(refund.amount()),
        "currency", refund.currency())));
  }

  PhaseResult refund(PhaseContext ctx) throws ProviderException {
    Checkpoint cp = ctx.checkpoint();
    String refundId = cp.require("refund_id");
    ProviderRefund refund;
    try {
      refund = provider.refund(ctx.derivedKey("refund"),
          new RefundRequest(cp.require("charge_id"), Long.parseLong(cp.require("amount"))));
    } catch (ProviderTimeoutException e) {
      return PhaseResult.respond(ProblemResponse.providerFailed(true, "refund", refundId, "refunded"));
    } catch (ProviderUnavailableException e) {
      return PhaseResult.respond(ProblemResponse.providerFailed(false, "refund", refundId, "refunded"));
    } catch (ProviderRejectedException e) {
      return PhaseResult.refuse(ProblemResponse.of(Problem.of(e.problemCode())
          .withDetail("the payment provider refused the refund for good; refund " + refundId + " failed and its"
              + " amount is refundable again. Send the refund again with a new Idempotency-Key")
          .with("refund_id", refundId).with("payment_id", cp.require("payment_id"))));
    }
    return PhaseResult.next(cp.with("provider_refund_id", refund.id()));
  }

  /**
   * After a refusal, in the transaction that ends the record: the payment's reserved amount is given back and the
   * refund marked failed.
   */
  void release(PhaseContext ctx) throws SQLException {
    Checkpoint cp = ctx.checkpoint();
    Connection c = connection(ctx);
    Instant now = now();
    payments.releaseRefund(c, cp.require("payment_id"), Long.parseLong(cp.require("amount")), now);
    refunds.fail(c, cp.require("refund_id"), now);
  }

  PhaseResult complete(PhaseContext ctx) throws Exception {
    Checkpoint cp = ctx.checkpoint();
    String refundId = cp.require("refund_id");
    Connection c = connection(ctx);
    Instant now = now();
    String tenant = tenant(ctx);
    refunds.succeed(c, refundId, cp.require("provider_refund_id"), now);
    Refund refund = refunds.find(c, tenant, refundId).orElseThrow(() -> new IllegalStateException(
        "refund " + refundId + " vanished while being completed"));
    events.publish(c, tenant, EventTypes.REFUND_SUCCEEDED, "refund", refundId, refund.toJson(), now);
    ledger.bookRefund(c, tenant, refundId, cp.require("account_id"), Long.parseLong(cp.require("amount")),
        cp.require("currency"), now);
    return PhaseResult.respond(StoredResponse.of(201, Map.of(
        "content-type", List.of("application/json"),
        "location", List.of("/refunds/" + refundId)), json.write(refund.toJson())));
  }

  private static String tenant(PhaseContext ctx) {
    return ctx.recordKey().scope().value();
  }

  private static Connection connection(PhaseContext ctx) {
    return JdbcTransaction.connectionOf(ctx.transaction());
  }

  private Instant now() {
    return Instant.ofEpochMilli(clock.millis());
  }
}
