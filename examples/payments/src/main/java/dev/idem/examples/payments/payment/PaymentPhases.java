package dev.idem.examples.payments.payment;

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
import dev.idem.examples.payments.provider.ChargeRequest;
import dev.idem.examples.payments.provider.ProviderCharge;
import dev.idem.examples.payments.provider.ProviderClient;
import dev.idem.examples.payments.provider.ProviderException;
import dev.idem.examples.payments.provider.ProviderRejectedException;
import dev.idem.examples.payments.provider.ProviderTimeoutException;
import dev.idem.examples.payments.provider.ProviderUnavailableException;
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
import javax.sql.DataSource;

/**
 * {@code POST /payments} as a phased operation, so that the provider call happens outside any transaction and a
 * retry (or the completer) resumes where the last attempt stopped:
 *
 * <ol>
 *   <li>{@code create}, in a transaction: validate, insert the payment {@code pending}, and put into the checkpoint
 *       everything later phases need;
 *   <li>{@code charge}, outside and repeatable (its checkpoint commits with {@code capture}): charge the provider
 *       through the {@link ProviderClient} (retry {@code provider}: an outage is retried a few times within the
 *       request's deadline) with the key derived from the record, the same on every attempt, so the provider
 *       charges at most once; a timeout, an outage that outlasts the retries or an open circuit breaker answers
 *       504/503, which is not kept, and the next attempt with the same key resumes here; a refusal for good
 *       ({@link ProviderRejectedException}, such as the provider key used before with other parameters) ends the
 *       operation with the provider's 422 problem, kept and not retryable, after {@link #release} marked the
 *       payment {@code failed};
 *   <li>{@code capture}, in a transaction: a declined charge marks the payment declined, writes
 *       {@code payment.declined} to the outbox and answers 402 (kept); else the payment is captured,
 *       {@code payment.succeeded} written to the outbox, the ledger pair booked, and the answer is 201. The event
 *       commits with the decision or not at all.
 * </ol>
 *
 * <p>A payment whose charge keeps failing past the resume cap ({@code idem.default-resume-cap-*}) becomes uncertain;
 * its {@linkplain #reconcile reconciler} asks the provider by the charge's key: a charge the provider made means the
 * record resumes (the charge call replays the provider's answer, and {@code capture} books it); no charge means the
 * payment is marked failed and the record ends with 422 {@code PAYMENT.not_charged}.
 *
 * Thread-safe.
 */
public final class PaymentPhases {
  /** The operation: method and route template of the handler. */
  public static final String OPERATION = "POST /payments";

  private final Payments payments;
  private final Ledger ledger;
  private final ProviderClient provider;
  private final TenantEvents events;
  private final Json json;
  private final Clock clock;
  private final DataSource dataSource;

  /**
   * The phases over these collaborators; {@code provider} is the retrying client of the simulated provider, and
   * {@code dataSource} where the reconciler fails a payment that was never charged.
   */
  public PaymentPhases(Payments payments, Ledger ledger, ProviderClient provider, TenantEvents events, Json json,
      Clock clock, DataSource dataSource) {
    this.dataSource = dataSource;
    this.payments = payments;
    this.ledger = ledger;
    this.provider = provider;
    this.events = events;
    this.json = json;
    this.clock = clock;
  }

  /** The phased operation {@code POST /payments}, for Idem to register. */
  public PhasedOperation operation() {
    return PhasedOperation.builder(OPERATION)
        .inTransaction("create", this::create)
        .outsideRepeatable("charge", this::charge)
        .inTransaction("capture", this::capture)
        .onRefusal(this::release)
        .reconciler(this::reconcile)
        .build();
  }

  /**
   * Decides an uncertain payment by the provider's look-up of the charge's key (the same key every charge attempt
   * sent): a charge found resumes the record; none found fails the payment (in a transaction of its own, only if it
   * is still pending, so that asking again changes nothing) and ends the record with 422 {@code PAYMENT.not_charged}.
   * A provider that cannot be asked throws, and the record stays uncertain until the next round.
   */
  Reconciler.Verdict reconcile(IdempotencyRecord record) throws Exception {
    if (provider.lookUpCharge(record.derive("charge")).isPresent()) {
      return Reconciler.Verdict.resume();
    }
    String paymentId = record.checkpoint().require("payment_id");
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      payments.failIfPending(c, paymentId, now());
    }
    return Reconciler.Verdict.failed(ProblemResponse.of(Problem.of(PaymentsProblems.PAYMENT_NOT_CHARGED)
        .withDetail("the provider could not be reached for long, and reconciliation found that it never charged"
            + " payment " + paymentId + "; the payment failed. Send it again with a new Idempotency-Key if it is"
            + " still wanted")
        .with("payment_id", paymentId)));
  }

  PhaseResult create(PhaseContext ctx) throws Exception {
    byte[] body = ctx.request().orElseThrow(() -> new IllegalStateException(
        "the create phase runs only for a client's request")).body();
    NewPayment request;
    try {
      request = NewPayment.parse(json.object(body));
    } catch (ApiProblem invalid) {
      return PhaseResult.respond(ProblemResponse.of(invalid.problem()));
    }
    Payment payment = new Payment(ResourceId.next("pay"), tenant(ctx), request.accountId(), request.amount(),
        request.currency(), request.description(), Payment.PENDING, null, 0, now());
    payments.insert(connection(ctx), payment);
    return PhaseResult.next(Checkpoint.of(Map.of(
        "payment_id", payment.id(),
        "account_id", payment.accountId(),
        "amount", Long.toString(payment.amount()),
        "currency", payment.currency())));
  }

  PhaseResult charge(PhaseContext ctx) throws ProviderException {
    Checkpoint cp = ctx.checkpoint();
    String paymentId = cp.require("payment_id");
    ChargeRequest request = new ChargeRequest(cp.require("account_id"), Long.parseLong(cp.require("amount")),
        cp.require("currency"));
    ProviderCharge charge;
    try {
      charge = provider.charge(ctx.derivedKey("charge"), request);
    } catch (ProviderTimeoutException e) {
      return PhaseResult.respond(ProblemResponse.providerFailed(true, "payment", paymentId, "charged"));
    } catch (ProviderUnavailableException e) {
      return PhaseResult.respond(ProblemResponse.providerFailed(false, "payment", paymentId, "charged"));
    } catch (ProviderRejectedException e) {
      return PhaseResult.refuse(ProblemResponse.of(Problem.of(e.problemCode())
          .withDetail("the payment provider refused the charge for good; payment " + paymentId + " failed and"
              + " nothing was charged. Send the payment again with a new Idempotency-Key")
          .with("payment_id", paymentId)));
    }
    return PhaseResult.next(cp.with("charge_id", charge.id()).with("charge_status", charge.status()));
  }

  /** After a refusal, in the transaction that ends the record: the pending payment is marked failed. */
  void release(PhaseContext ctx) throws SQLException {
    payments.settle(connection(ctx), ctx.checkpoint().require("payment_id"), Payment.FAILED, null, now());
  }

  PhaseResult capture(PhaseContext ctx) throws Exception {
    Checkpoint cp = ctx.checkpoint();
    String paymentId = cp.require("payment_id");
    String chargeId = cp.require("charge_id");
    Connection c = connection(ctx);
    Instant now = now();
    String tenant = tenant(ctx);
    if (ProviderCharge.DECLINED.equals(cp.require("charge_status"))) {
      payments.settle(c, paymentId, Payment.DECLINED, chargeId, now);
      Payment declined = find(c, tenant, paymentId);
      events.publish(c, tenant, EventTypes.PAYMENT_DECLINED, "payment", paymentId, declined.toJson(), now);
      return PhaseResult.respond(ProblemResponse.of(Problem.of(PaymentsProblems.PAYMENT_DECLINED)
          .withDetail("the payment provider declined the charge to account " + cp.require("account_id"))
          .with("payment_id", paymentId).with("provider_charge_id", chargeId)));
    }
    payments.settle(c, paymentId, Payment.CAPTURED, chargeId, now);
    Payment payment = find(c, tenant, paymentId);
    // written before the ledger booking: whatever fails later in this transaction takes the event with it
    events.publish(c, tenant, EventTypes.PAYMENT_SUCCEEDED, "payment", paymentId, payment.toJson(), now);
    ledger.bookPayment(c, tenant, paymentId, cp.require("account_id"), Long.parseLong(cp.require("amount")),
        cp.require("currency"), now);
    return PhaseResult.respond(StoredResponse.of(201, Map.of(
        "content-type", List.of("application/json"),
        "location", List.of("/payments/" + paymentId)), json.write(payment.toJson())));
  }

  private Payment find(Connection c, String tenant, String paymentId) throws SQLException {
    return payments.find(c, tenant, paymentId).orElseThrow(() -> new IllegalStateException(
        "payment " + paymentId + " vanished while being settled"));
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
