package dev.idem.outbox.webhook;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idem.outbox.OutboxTransport;
import dev.idem.test.outbox.OutboxTransportContract;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@link OutboxTransportContract} for {@link WebhookTransport}, against the JDK's {@link HttpServer} on 127.0.0.1: each
 * destination is an endpoint with a server of its own that verifies the signature (a forged or stale request is
 * answered 401) and answers 204, counting as arrived only what it answered 2xx; its outage stops the server, so that
 * its port refuses connections, and its end starts a new one on the same port. The transport sends a batch
 * concurrently, so a batch's order is not checked, and HTTP has no ordering key.
 */
class WebhookTransportContractTest extends OutboxTransportContract {
  private final WebhookSecret secret = WebhookSecret.generate();
  private final WebhookVerifier verifier = WebhookVerifier.builder(secret).build();
  final Map<String, WebhookEndpoint> endpoints = new ConcurrentHashMap<>();
  private final Map<String, Receiver> receivers = new ConcurrentHashMap<>();

  @Override
  protected String createDestination() throws IOException {
    String id = uniqueName("we_kit_");
    Receiver receiver = new Receiver();
    receiver.start(0);
    receivers.put(id, receiver);
    URI url = URI.create("http://127.0.0.1:" + receiver.port + "/hooks/" + id);
    endpoints.put(id, new WebhookEndpoint(id, url, List.of(secret), true));
    return "webhook:" + id;
  }

  @Override
  protected OutboxTransport createTransport() {
    WebhookEndpoints lookup = new WebhookEndpoints() {
      @Override
      public Optional<WebhookEndpoint> find(String id) {
        return Optional.ofNullable(endpoints.get(id));
      }

      @Override
      public void disable(String id, String reason) {
        endpoints.computeIfPresent(id, (k, e) -> new WebhookEndpoint(e.id(), e.url(), e.secrets(), false));
      }
    };
    return WebhookTransport.builder(lookup).timeout(Duration.ofSeconds(5)).allowPrivateAddresses(true).build();
  }

  @Override
  protected List<Received> received(String destination) {
    return List.copyOf(receiver(destination).arrived);
  }

  @Override
  protected void startOutage(String destination) {
    receiver(destination).stop();
  }

  @Override
  protected void endOutage(String destination) throws IOException {
    Receiver receiver = receiver(destination);
    receiver.start(receiver.port);
  }

  @Override
  protected void deleteDestination(String destination) {
    receiver(destination).stop();
  }

  Receiver receiver(String destination) {
    return receivers.get(destination.substring("webhook:".length()));
  }

  /** One endpoint's server: what it accepted (answered 2xx), in the order it did. */
  final class Receiver {
    final List<Received> arrived = new CopyOnWriteArrayList<>();
    /** The status it answers to a request whose signature holds. */
    volatile int status = 204;
    volatile int port;
    private HttpServer server;
    private ExecutorService threads;

    synchronized void start(int onPort) throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", onPort), 0);
      threads = Executors.newCachedThreadPool();
      server.setExecutor(threads);
      server.createContext("/hooks/", this::accept);
      server.start();
      port = server.getAddress().getPort();
    }

    synchronized void stop() {
      if (server != null) {
        server.stop(0);
        threads.shutdownNow();
        server = null;
      }
    }

    private void accept(HttpExchange x) throws IOException {
      try (x) {
        byte[] body = x.getRequestBody().readAllBytes();
        String id = x.getRequestHeaders().getFirst("webhook-id");
        try {
          verifier.verify(id, x.getRequestHeaders().getFirst("webhook-timestamp"),
              x.getRequestHeaders().getFirst("webhook-signature"), body);
        } catch (WebhookVerificationException e) {
          x.sendResponseHeaders(401, -1);
          return;
        }
        int answer = status;
        if (answer >= 200 && answer < 300) {
          Map<String, String> headers = new LinkedHashMap<>();
          x.getRequestHeaders().forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values.get(0)));
          arrived.add(new Received(id, body, headers, null));
        }
        x.sendResponseHeaders(answer, -1);
      }
    }
  }
}
