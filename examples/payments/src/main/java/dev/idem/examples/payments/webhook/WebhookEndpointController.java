package dev.idem.examples.payments.webhook;

import dev.idem.examples.payments.PaymentsProperties;
import dev.idem.examples.payments.auth.Tenant;
import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.JsonRequest;
import dev.idem.outbox.webhook.WebhookTransport;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.security.Principal;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.core.env.Environment;
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
  private final boolean allowPrivateAddresses;
  private final Environment environment;
  private final JdbcWebhookEndpoints endpoints;
  private final Json json;

  public WebhookEndpointController(JdbcWebhookEndpoints endpoints, Json json, PaymentsProperties properties,
      Environment environment) {
    this.allowPrivateAddresses = properties.webhooks().allowPrivateAddresses();
    this.environment = environment;
    this.endpoints = endpoints;
    this.json = json;
  }

  @PostMapping("/webhook-endpoints")
  public void create(HttpServletRequest request, HttpServletResponse response) throws IOException, SQLException {
    String tenant = Tenant.of(request.getUserPrincipal()).name();
    NewWebhookEndpoint wanted = NewWebhookEndpoint.parse(json.object(JsonRequest.body(request)));
    checkAddress(wanted.url());
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

  /**
   * Refuses, when the endpoint is created rather than at every send, a URL that resolves to an internal or
   * special-purpose address ({@link WebhookTransport#specialPurposeRange}) while those are not allowed, and always one
   * that points at this service itself (the relay would call its own routes). Ambiguous numeric hosts never get here:
   * {@link NewWebhookEndpoint} refuses them as written.
   */
  private void checkAddress(URI url) {
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(url.getHost());
    } catch (UnknownHostException e) {
      throw ApiProblem.invalid("url", "url host " + url.getHost() + " does not resolve");
    }
    int port = url.getPort() != -1 ? url.getPort() : url.getScheme().equalsIgnoreCase("https") ? 443 : 80;
    Integer own = environment.getProperty("local.server.port", Integer.class);
    for (InetAddress a : addresses) {
      if ((a.isLoopbackAddress() || a.isAnyLocalAddress()) && own != null && own == port) {
        throw ApiProblem.invalid("url", "url points at this service itself");
      }
      Optional<String> range = allowPrivateAddresses ? Optional.empty() : WebhookTransport.specialPurposeRange(a);
      if (range.isPresent()) {
        throw ApiProblem.invalid("url", "url resolves to " + a.getHostAddress() + ", in " + range.get()
            + ": internal and special-purpose addresses are refused");
      }
    }
  }
}
