package dev.idem.examples.payments;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookVerificationException;
import dev.idem.outbox.webhook.WebhookVerifier;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A tenant's webhook endpoint for tests: an HTTP server on 127.0.0.1 and a free port that verifies each request's
 * Standard Webhooks signature with the endpoint's secret, records it, and answers with the status it is told
 * (200 unless {@link #answer} changed it; 400 for a request that fails verification).
 */
final class WebhookSink implements AutoCloseable {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** One request as the sink saw it. */
  record Delivery(String webhookId, JsonNode payload, boolean verified, int answered) {
    String type() {
      return payload.path("type").asString();
    }

    String dataId() {
      return payload.path("data").path("id").asString();
    }
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(4);
  private final AtomicInteger status = new AtomicInteger(200);
  private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
  private volatile WebhookVerifier verifier;

  private WebhookSink() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/hook", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  static WebhookSink start() {
    try {
      return new WebhookSink();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start a webhook sink on 127.0.0.1: " + e, e);
    }
  }

  URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/hook");
  }

  /** The endpoint's secret, as {@code POST /webhook-endpoints} answered it. */
  WebhookSink secret(String whsec) {
    verifier = WebhookVerifier.builder(WebhookSecret.parse(whsec)).build();
    return this;
  }

  /** The status to answer verified requests with from now on. */
  void answer(int code) {
    status.set(code);
  }

  List<Delivery> deliveries() {
    return List.copyOf(deliveries);
  }

  /** Verified requests about {@code dataId} that the sink answered with 2xx. */
  List<Delivery> accepted(String dataId) {
    return deliveries.stream().filter(d -> d.verified() && d.answered() / 100 == 2 && d.dataId().equals(dataId))
        .toList();
  }

  /** Every request about {@code dataId}, whatever the answer. */
  List<Delivery> about(String dataId) {
    return deliveries.stream().filter(d -> d.dataId().equals(dataId)).toList();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      String id = exchange.getRequestHeaders().getFirst("webhook-id");
      boolean verified;
      try {
        WebhookVerifier v = verifier;
        if (v == null) {
          throw new WebhookVerificationException(WebhookVerificationException.Reason.SIGNATURE_MISMATCH,
              "the sink has no secret yet");
        }
        v.verify(id, exchange.getRequestHeaders().getFirst("webhook-timestamp"),
            exchange.getRequestHeaders().getFirst("webhook-signature"), body);
        verified = true;
      } catch (WebhookVerificationException e) {
        verified = false;
      }
      JsonNode payload;
      try {
        payload = JSON.readTree(new String(body, StandardCharsets.UTF_8));
      } catch (RuntimeException e) {
        payload = JSON.createObjectNode();
      }
      int code = verified ? status.get() : 400;
      deliveries.add(new Delivery(id, payload, verified, code));
      exchange.sendResponseHeaders(code, -1);
    } finally {
      exchange.close();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
