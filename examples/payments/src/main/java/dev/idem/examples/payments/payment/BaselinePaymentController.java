package dev.idem.examples.payments.payment;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.examples.payments.ResourceId;
import dev.idem.examples.payments.auth.Tenant;
import dev.idem.examples.payments.ledger.Ledger;
import dev.idem.examples.payments.outbox.TenantEvents;
import dev.idem.examples.payments.provider.ChargeRequest;
import dev.idem.examples.payments.provider.PaymentProvider;
import dev.idem.examples.payments.provider.ProviderCharge;
import dev.idem.examples.payments.provider.ProviderException;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonRequest;
import dev.idem.examples.payments.webhook.EventTypes;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /baseline/payments}: the same work as {@code POST /payments} (validate, insert the payment pending,
 * charge the provider outside any transaction, capture, write the event to the outbox and book the ledger pair)
 * without the idempotency layer. It
 * exists for the benchmark that measures what the layer costs, and is off unless
 * {@code payments.baseline-route.enabled=true}. Not idempotent: never expose it to clients.
 */
@RestController
@ConditionalOnProperty(prefix = "payments.baseline-route", name = "enabled", havingValue = "true")
public class BaselinePaymentController {
  private final DataSource dataSource;
  private final Payments payments;
  private final Ledger ledger;
  private final PaymentProvider provider;
  private final TenantEvents events;
  private final Json json;
  private final Clock clock;

  public BaselinePaymentController(DataSource dataSource, Payments payments, Ledger ledger, PaymentProvider provider,
      TenantEvents events, Json json, Clock clock) {
    this.dataSource = dataSource;
    this.payments = payments;
    this.ledger = ledger;
    this.provider = provider;
    this.events = events;
    this.json = json;
    this.clock = clock;
  }

  @PostMapping("/baseline/payments")
  public void create(HttpServletRequest request, HttpServletResponse response) throws Exception {
    String tenant = Tenant.of(request.getUserPrincipal()).name();
    var body = json.object(JsonRequest.body(request));
    NewPayment.checkTypes(body);
    NewPayment p = NewPayment.parse(body);
    Instant now = Instant.ofEpochMilli(clock.millis());
    Payment pending = new Payment(ResourceId.next("pay"), tenant, p.accountId(), p.amount(), p.currency(),
        p.description(), Payment.PENDING, null, 0, now);
    inTransaction(c -> payments.insert(c, pending));
    ProviderCharge charge;
    try {
      charge = provider.charge("baseline:" + pending.id(), new ChargeRequest(p.accountId(), p.amount(), p.currency()));
    } catch (ProviderException e) {
      throw new ApiProblem(Problem.of(ProblemCode.DEPENDENCY_UNAVAILABLE)
          .withTitle("Payment provider unavailable"));
    }
    Payment[] done = new Payment[1];
    inTransaction(c -> {
      boolean declined = charge.declined();
      payments.settle(c, pending.id(), declined ? Payment.DECLINED : Payment.CAPTURED, charge.id(), now);
      done[0] = payments.find(c, tenant, pending.id()).orElseThrow();
      events.publish(c, tenant, declined ? EventTypes.PAYMENT_DECLINED : EventTypes.PAYMENT_SUCCEEDED, "payment",
          pending.id(), done[0].toJson(), now);
      if (!declined) {
        ledger.bookPayment(c, tenant, pending.id(), p.accountId(), p.amount(), p.currency(), now);
      }
    });
    byte[] out = json.write(done[0].toJson());
    response.setStatus(201);
    response.setContentType("application/json");
    response.setHeader("Location", "/payments/" + pending.id());
    response.setContentLength(out.length);
    response.getOutputStream().write(out);
  }

  private interface Work {
    void run(Connection c) throws SQLException;
  }

  private void inTransaction(Work work) throws SQLException, IOException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        work.run(c);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }
}
