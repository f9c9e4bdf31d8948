package dev.idem.examples.payments.refund;

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

/** {@code POST /refunds} (idempotent, phased: see {@link RefundPhases}) and {@code GET /refunds/{id}}. */
@RestController
public class RefundController {
  private final Refunds refunds;
  private final Json json;

  public RefundController(Refunds refunds, Json json) {
    this.refunds = refunds;
    this.json = json;
  }

  @PostMapping("/refunds")
  @Idempotent(mode = IdempotentRoute.Mode.PHASED)
  public void create(HttpServletRequest request, HttpServletResponse response) throws IOException {
    IdempotentExchange exchange = IdempotentExchange.current(request);
    response.setHeader(IdempotencyFilter.KEY_HEADER, exchange.keyHeader());
    JsonRequest.requireJson(request);
    NewRefund.checkTypes(json.object(exchange.request().body()));
    exchange.phased(response);
  }

  @GetMapping(path = "/refunds/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
  public Map<String, Object> get(Principal principal, @PathVariable("id") String id) throws SQLException {
    return refunds.find(Tenant.of(principal).name(), id).map(Refund::toJson)
        .orElseThrow(() -> ApiProblem.notFound("refund", "no refund " + id));
  }
}
