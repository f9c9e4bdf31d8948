package dev.idem.examples.payments.webhook;

import dev.idem.examples.payments.auth.Tenant;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonRequest;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A tenant's webhook endpoints: {@code POST /webhook-endpoints} creates one and answers its secret (the only time it
 * is shown), {@code GET /webhook-endpoints} and {@code GET /webhook-endpoints/{id}} read them without secrets. A
 * tenant sees only its own endpoints; another tenant's id answers 404.
 *
 * <p>Creating an endpoint is not an idempotent route: a client unsure whether its creation went through lists the
 * endpoints before creating another.
 */
@RestController
public class WebhookEndpointController {
  private final JdbcWebhookEndpoints endpoints;
  private final Json json;

  public WebhookEndpointController(JdbcWebhookEndpoints endpoints, Json json) {
    this.endpoints = endpoints;
    this.json = json;
  }

  @PostMapping("/webhook-endpoints")
  public void create(HttpServletRequest request, HttpServletResponse response) throws IOException, SQLException {
    String tenant = Tenant.of(request.getUserPrincipal()).name();
    NewWebhookEndpoint wanted = NewWebhookEndpoint.parse(json.object(JsonRequest.body(request)));
    JdbcWebhookEndpoints.Created created = endpoints.create(tenant, wanted);
    Map<String, Object> document = created.endpoint().toJson();
    document.remove("disabled_reason");
    document.put("secret", created.secret().reveal());
    byte[] body = json.write(document);
    response.setStatus(201);
    response.setHeader("Location", "/webhook-endpoints/" + created.endpoint().id());
    response.setHeader("Cache-Control", "no-store");
    response.setContentType(MediaType.APPLICATION_JSON_VALUE);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  @GetMapping(path = "/webhook-endpoints", produces = MediaType.APPLICATION_JSON_VALUE)
  public Map<String, Object> list(Principal principal) throws SQLException {
    List<Map<String, Object>> items = endpoints.list(Tenant.of(principal).name()).stream()
        .map(WebhookSubscription::toJson).toList();
    return Json.list("webhook_endpoints", items);
  }

  @GetMapping(path = "/webhook-endpoints/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
  public Map<String, Object> get(Principal principal, @PathVariable("id") String id) throws SQLException {
    return endpoints.find(Tenant.of(principal).name(), id).map(WebhookSubscription::toJson)
        .orElseThrow(() -> ApiProblem.notFound("webhook_endpoint", "no webhook endpoint " + id));
  }
}
