package dev.idem.examples.payments.payment;

import dev.idem.examples.payments.auth.Tenant;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonRequest;
import dev.idem.servlet.IdempotencyFilter;
import dev.idem.servlet.IdempotentExchange;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.servlet.conditional.Preconditions;
import dev.idem.servlet.conditional.VersionCondition;
import dev.idem.spring.Idempotent;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /payments} (idempotent, phased: see {@link PaymentPhases}), {@code GET /payments/{id}} (with a strong
 * {@code ETag}, and 304 for a matching {@code If-None-Match}) and {@code PATCH /payments/{id}} (change
 * {@code description} and {@code metadata} under {@code If-Match}).
 *
 * <p>The handler refuses a body of the wrong shape (not JSON-typed, not an object, fields of the wrong JSON type)
 * before it hands the request to Idem, so such a mistake is not stored and the key stays free for a corrected
 * request.
 *
 * <p>{@code PATCH} is not an idempotency-key route: {@code If-Match} makes it safe to retry, because a retry of a
 * change that succeeded finds a newer version and gets 412, never a second change. The version check and the write
 * are one {@code UPDATE} ({@link Payments#change}); a read happens only after a refusal, to choose between 404 and
 * 412.
 */
@RestController
public class PaymentController {
  private final Payments payments;
  private final Json json;
  private final Clock clock;

  public PaymentController(Payments payments, Json json, Clock clock) {
    this.payments = payments;
    this.json = json;
    this.clock = clock;
  }

  @PostMapping("/payments")
  @Idempotent(mode = IdempotentRoute.Mode.PHASED)
  public void create(HttpServletRequest request, HttpServletResponse response) throws IOException {
    IdempotentExchange exchange = IdempotentExchange.current(request);
    response.setHeader(IdempotencyFilter.KEY_HEADER, exchange.keyHeader());
    JsonRequest.requireJson(request);
    NewPayment.checkTypes(json.object(exchange.request().body()));
    exchange.phased(response);
  }

  @GetMapping(path = "/payments/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
  public void get(HttpServletRequest request, HttpServletResponse response, @PathVariable("id") String id)
      throws SQLException, IOException {
    Payment payment = payments.find(Tenant.of(request.getUserPrincipal()).name(), id)
        .orElseThrow(() -> notFound(id));
    if (Preconditions.require(request, response, payment.etag(), Preconditions.Requirement.NONE)) {
      write(response, 200, payment);
    }
  }

  @PatchMapping("/payments/{id}")
  public void change(HttpServletRequest request, HttpServletResponse response, @PathVariable("id") String id)
      throws SQLException, IOException {
    String tenant = Tenant.of(request.getUserPrincipal()).name();
    Preconditions preconditions = Preconditions.of(request);
    Preconditions.Result early = preconditions.check(Preconditions.Requirement.IF_MATCH);
    if (!early.proceed()) {
      early.write(response, null);
      return;
    }
    PaymentChange change = PaymentChange.parse(json.object(JsonRequest.body(request)));
    VersionCondition expected = preconditions.versionCondition();
    Optional<Payment> changed = expected.updatable()
        ? payments.change(tenant, id, change, expected, Instant.ofEpochMilli(clock.millis()))
        : Optional.empty();
    if (changed.isPresent()) {
      write(response, 200, changed.get());
      return;
    }
    // refused: read only to tell an unknown payment (404) from a stale version (412)
    Payment current = payments.find(tenant, id).orElseThrow(() -> notFound(id));
    Preconditions.Result refusal = preconditions.evaluate(current.etag(), Preconditions.Requirement.IF_MATCH);
    if (refusal.proceed()) {
      // versions only grow, so this is a version newer than any the request named
      refusal = Preconditions.Result.failed("the payment changed while the request ran; its ETag is now "
          + current.etag());
    }
    refusal.write(response, current.etag());
  }

  private void write(HttpServletResponse response, int status, Payment payment) throws IOException {
    byte[] body = json.write(payment.toJson());
    response.setStatus(status);
    response.setHeader(Preconditions.ETAG, payment.etag().toString());
    response.setContentType("application/json");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  private static ApiProblem notFound(String id) {
    return ApiProblem.notFound("payment", "no payment " + id);
  }
}
