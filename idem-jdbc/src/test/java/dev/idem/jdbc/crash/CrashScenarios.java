package dev.idem.jdbc.crash;

import dev.idem.core.AtomicWork;
import dev.idem.core.Checkpoint;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.Operation;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcTransaction;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The work the crash tests run, identical in the child that is killed and in the parent that recovers: the same code
 * path, with a hook at the crash point that the child uses to stop and the parent leaves empty.
 */
final class CrashScenarios {
  static final String ATOMIC_OPERATION = "POST /crash-effects";
  static final String PAYMENTS = "POST /payments";
  static final String EFFECT_BODY = "{\"effect\":1}";
  static final String PAYMENT_BODY = "{\"amount\":1500,\"currency\":\"EUR\"}";
  private static final Pattern AMOUNT = Pattern.compile("\"amount\"\\s*:\\s*(\\d+)");

  private CrashScenarios() {}

  static IdempotentRequest request(String operation, String scope, String key, String body) {
    return IdempotentRequest.of(Scope.of(scope), Operation.of(operation), IdempotencyKey.of(key),
        body.getBytes(StandardCharsets.UTF_8));
  }

  /** The business row's marker for a request: unique per scope and key. */
  static String marker(IdempotentRequest request) {
    return request.scope().value() + "/" + request.key().value();
  }

  /**
   * Atomic work: inserts the business row in the record's transaction, calls {@code afterWrite} with the rows this
   * transaction sees (the crash point), and answers 201 naming the process that ran it.
   */
  static AtomicWork insertEffect(IdempotentRequest request, IntConsumer afterWrite) {
    String marker = marker(request);
    String producedBy = "pid-" + ProcessHandle.current().pid();
    return tx -> {
      Connection c = JdbcTransaction.connectionOf(tx);
      CrashTables.insertEffect(c, marker, producedBy);
      afterWrite.accept(CrashTables.countEffects(c, marker));
      return StoredResponse.json(201, "{\"marker\":\"" + marker + "\",\"by\":\"" + producedBy + "\"}");
    };
  }

  /**
   * {@code POST /payments} in three phases: create a pending payment (in a transaction), charge the provider with the
   * derived key {@code <key>:charge} (outside any transaction) and call {@code afterCharge} with that key (the crash
   * point: the charge is committed at the provider, the phase is not), then capture the payment and answer 201.
   */
  static PhasedOperation payments(DataSource dataSource, JdbcDialect dialect, Consumer<String> afterCharge) {
    FakePaymentProvider provider = new FakePaymentProvider(dataSource, dialect);
    return PhasedOperation.builder(PAYMENTS)
        .inTransaction("create", ctx -> {
          IdempotentRequest request = ctx.request().orElseThrow(
              () -> new IllegalStateException("the first phase runs for a client's request"));
          long amount = amountOf(request);
          String paymentId = "pay_" + UUID.randomUUID();
          CrashTables.insertPendingPayment(JdbcTransaction.connectionOf(ctx.transaction()), paymentId,
              ctx.key().value(), amount);
          return PhaseResult.next(Checkpoint.of(Map.of("payment_id", paymentId, "amount", Long.toString(amount))));
        })
        .outside("charge", ctx -> {
          String derivedKey = ctx.derivedKey("charge");
          String chargeId = provider.charge(derivedKey, Long.parseLong(ctx.checkpoint().require("amount")));
          afterCharge.accept(derivedKey);
          return PhaseResult.next(ctx.checkpoint().with("charge_id", chargeId));
        })
        .inTransaction("capture", ctx -> {
          String paymentId = ctx.checkpoint().require("payment_id");
          String chargeId = ctx.checkpoint().require("charge_id");
          CrashTables.capturePayment(JdbcTransaction.connectionOf(ctx.transaction()), paymentId, chargeId);
          return PhaseResult.respond(StoredResponse.json(201, "{\"id\":\"" + paymentId + "\",\"status\":\"captured\","
              + "\"amount\":" + ctx.checkpoint().require("amount") + ",\"charge\":\"" + chargeId + "\"}"));
        })
        .build();
  }

  private static long amountOf(IdempotentRequest request) {
    Matcher m = AMOUNT.matcher(new String(request.body(), StandardCharsets.UTF_8));
    if (!m.find()) {
      throw new IllegalArgumentException("request has no amount");
    }
    return Long.parseLong(m.group(1));
  }
}
