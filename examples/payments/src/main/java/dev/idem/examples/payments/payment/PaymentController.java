package dev.idem.examples.payments.payment;

import dev.idem.examples.payments.auth.Tenant;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonRequest;
import dev.idem.servlet.IdempotencyFilter;
import dev.idem.servlet.IdempotentExchange;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.sql.SQLException;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /payments} (idempotent, phased: see {@link PaymentPhases}) and {@code GET /payments/{id}}.
 *
 * <p>The handler refuses a body of the wrong shape (not JSON-typed, not an object, fields of the wrong JSON type)
 * before it hands the request to Idem, so such a mistake is not stored and the key stays free for a corrected
 * request.
 */
@RestController
public class PaymentController {
  private final Payments payments;
  private final Json json;

  public PaymentController(Payments payments, Json json) {
    this.payments = payments;
    this.json = json;
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
  public Map<String, Object> get(Principal principal, @PathVariable("id") String id) throws SQLException {
    return payments.find(Tenant.of(principal).name(), id).map(Payment::toJson)
        .orElseThrow(() -> ApiProblem.notFound("payment", "no payment " + id));
  }
}
