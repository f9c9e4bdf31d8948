package dev.idem.outbox.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The webhook transport against a real HTTP server on 127.0.0.1. */
class WebhookTransportTest {
  HttpServer server;
  final ConcurrentLinkedQueue<Map<String, String>> received = new ConcurrentLinkedQueue<>();
  final WebhookSecret secret = WebhookSecret.generate();
  volatile ToIntFunction<HttpExchange> answer = x -> 204;
  final CountDownLatch release = new CountDownLatch(1);
  WebhookEndpoints endpoints;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/hook", x -> {
      byte[] body = x.getRequestBody().readAllBytes();
      String id = x.getRequestHeaders().getFirst("webhook-id");
      String ts = x.getRequestHeaders().getFirst("webhook-timestamp");
      String sig = x.getRequestHeaders().getFirst("webhook-signature");
      String verified;
      try {
        WebhookVerifier.builder(secret).build().verify(id, ts, sig, body);
        verified = "yes";
      } catch (WebhookVerificationException e) {
        verified = e.reason().name();
      }
      received.add(Map.of("id", id, "body", new String(body), "verified", verified,
          "tenant", String.valueOf(x.getRequestHeaders().getFirst("x-tenant")),
          "type", x.getRequestHeaders().getFirst("content-type")));
      int status = answer.applyAsInt(x);
      x.sendResponseHeaders(status, -1);
      x.close();
    });
    server.start();
    URI url = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/hook");
    endpoints = WebhookEndpoints.of(new WebhookEndpoint("we_1", url, List.of(secret), true),
        new WebhookEndpoint("we_off", url, List.of(secret), false));
  }

  @AfterEach
  void stop() {
    release.countDown();
    server.stop(0);
  }

  OutboxMessage message(String endpoint) {
    return new OutboxMessage(UUID.randomUUID(), "payment.succeeded", "payment", "pay_1", "{\"amount\":100}",
        Map.of("x-tenant", "alice", "webhook-id", "spoofed"), "webhook:" + endpoint, 1, Instant.now());
  }

  WebhookTransport transport() {
    return WebhookTransport.builder(endpoints).timeout(Duration.ofSeconds(5)).allowPrivateAddresses(true).build();
  }

  @Test
  void deliversASignedRequestWhoseIdIsTheEventId() throws Exception {
    OutboxMessage m = message("we_1");
    assertThat(transport().send(m).isDelivered()).isTrue();
    assertThat(received).singleElement().satisfies(r -> {
      assertThat(r).containsEntry("id", m.id().toString()).containsEntry("body", "{\"amount\":100}")
          .containsEntry("verified", "yes").containsEntry("tenant", "alice")
          .containsEntry("type", "application/json");
    });
  }

  @Test
  void onlyTwoHundredsCount() throws Exception {
    answer = x -> 302;
    DeliveryResult redirect = transport().send(message("we_1"));
    assertThat(redirect.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(redirect.responseCode()).contains(302);
    answer = x -> 500;
    assertThat(transport().send(message("we_1")).error()).contains("HTTP 500");
  }

  @Test
  void goneDisablesTheEndpointAndLaterEventsDieWithoutARequest() throws Exception {
    answer = x -> 410;
    WebhookTransport transport = transport();
    DeliveryResult gone = transport.send(message("we_1"));
    assertThat(gone.kind()).isEqualTo(DeliveryResult.Kind.PERMANENT);
    assertThat(endpoints.find("we_1").orElseThrow().enabled()).isFalse();
    DeliveryResult next = transport.send(message("we_1"));
    assertThat(next.kind()).isEqualTo(DeliveryResult.Kind.PERMANENT);
    assertThat(received).hasSize(1);
    assertThat(transport.send(message("we_off")).error()).hasValueSatisfying(e -> assertThat(e).contains("disabled"));
    assertThat(transport.send(message("we_unknown")).error())
        .hasValueSatisfying(e -> assertThat(e).contains("no webhook endpoint"));
  }

  @Test
  void tooManyRequestsAndUnavailableHonourRetryAfter() throws Exception {
    answer = x -> {
      x.getResponseHeaders().set("Retry-After", "120");
      return 429;
    };
    DeliveryResult r = transport().send(message("we_1"));
    assertThat(r.retryAfter()).contains(Duration.ofSeconds(120));
    answer = x -> {
      x.getResponseHeaders().set("Retry-After", "7");
      return 503;
    };
    assertThat(transport().send(message("we_1")).retryAfter()).contains(Duration.ofSeconds(7));
    answer = x -> 503;
    assertThat(transport().send(message("we_1")).retryAfter()).isEmpty();
  }

  @Test
  void aSlowEndpointTimesOutAsARetryableFailure() throws Exception {
    answer = x -> {
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return 200;
    };
    WebhookTransport transport = WebhookTransport.builder(endpoints).timeout(Duration.ofMillis(300))
        .allowPrivateAddresses(true).build();
    DeliveryResult r = transport.send(message("we_1"));
    assertThat(r.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(r.error()).hasValueSatisfying(e -> assertThat(e).contains("timed out"));
    List<DeliveryResult> batch = transport.sendAll(List.of(message("we_1"), message("we_off")));
    assertThat(batch).extracting(DeliveryResult::kind)
        .containsExactly(DeliveryResult.Kind.RETRY, DeliveryResult.Kind.PERMANENT);
  }

  @Test
  void aMessageTimedOutInItsAddressCheckIsNeverSentAfterwards() throws Exception {
    CountDownLatch slowCheck = new CountDownLatch(1);
    CountDownLatch slowCheckReturned = new CountDownLatch(1);
    AtomicInteger checks = new AtomicInteger();
    WebhookTransport transport = WebhookTransport.builder(endpoints).timeout(Duration.ofMillis(100))
        .maxConcurrentRequests(1).addressCheck(host -> {
          if (checks.incrementAndGet() == 1) {
            try {
              slowCheck.await(30, TimeUnit.SECONDS); // a DNS answer that comes after the batch's deadline
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } finally {
              slowCheckReturned.countDown();
            }
          }
          return null;
        }).build();
    try {
      OutboxMessage late = message("we_1");
      DeliveryResult r = transport.sendAll(List.of(late)).get(0);
      assertThat(r.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
      assertThat(r.error()).hasValueSatisfying(e -> assertThat(e).contains("timed out"));

      slowCheck.countDown(); // the check answers now: the relay has recorded the failure, nothing may be sent
      assertThat(slowCheckReturned.await(30, TimeUnit.SECONDS)).isTrue();
      OutboxMessage next = message("we_1");
      OutboxMessage last = message("we_1");
      // one sender thread: a request submitted by the late check would be in line before these
      assertThat(transport.sendAll(List.of(next)).get(0).isDelivered()).isTrue();
      assertThat(transport.sendAll(List.of(last)).get(0).isDelivered()).isTrue();
      assertThat(received).extracting(x -> x.get("id"))
          .containsExactly(next.id().toString(), last.id().toString());
      assertThat(checks).hasValue(3);
    } finally {
      transport.close();
    }
  }

  @Test
  void addressChecksBeyondTheResolversQueueAreRefusedAsRetries() throws Exception {
    CountDownLatch stuck = new CountDownLatch(1);
    int count = 4 + WebhookTransport.RESOLVER_QUEUE + 1; // four busy resolver threads, a full queue, one more
    List<WebhookEndpoint> all = new ArrayList<>();
    List<OutboxMessage> messages = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String host = "h" + i + ".localhost";
      all.add(new WebhookEndpoint("we_" + i, URI.create("http://" + host + ":1/hook"), List.of(secret), true));
      messages.add(message("we_" + i));
    }
    WebhookTransport transport = WebhookTransport.builder(WebhookEndpoints.of(all.toArray(WebhookEndpoint[]::new)))
        .timeout(Duration.ofMillis(100)).addressCheck(host -> {
          try {
            stuck.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return DeliveryResult.permanent("refused " + host, null);
        }).build();
    try {
      List<DeliveryResult> results = transport.sendAll(messages);
      assertThat(results).allSatisfy(r -> assertThat(r.kind()).isEqualTo(DeliveryResult.Kind.RETRY));
      assertThat(results.subList(0, count - 1))
          .allSatisfy(r -> assertThat(r.error()).hasValue("timed out after 100 ms"));
      assertThat(results.get(count - 1).error()).hasValue("the webhook address resolver is busy: "
          + WebhookTransport.RESOLVER_QUEUE + " address checks are waiting");
    } finally {
      stuck.countDown();
      transport.close();
    }
    assertThat(received).isEmpty();
  }

  @Test
  void aBatchIsSentConcurrentlyWithOneResultEach() {
    List<OutboxMessage> batch = List.of(message("we_1"), message("we_1"), message("we_unknown"), message("we_1"));
    List<DeliveryResult> results = transport().sendAll(batch);
    assertThat(results).extracting(DeliveryResult::kind).containsExactly(DeliveryResult.Kind.DELIVERED,
        DeliveryResult.Kind.DELIVERED, DeliveryResult.Kind.PERMANENT, DeliveryResult.Kind.DELIVERED);
    assertThat(received).hasSize(3).allSatisfy(r -> assertThat(r).containsEntry("verified", "yes"));
  }

  @Test
  void aSteadyFlowOfWebhooksStartsNoThreadPerRequest() throws Exception {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    try (WebhookTransport transport = transport()) {
      // the first request starts the sender, the HTTP client's and the test server's threads
      assertThat(transport.send(message("we_1")).isDelivered()).isTrue();
      long before = threads.getTotalStartedThreadCount();

      for (int i = 0; i < 100; i++) {
        assertThat(transport.send(message("we_1")).isDelivered()).as("webhook %d", i).isTrue();
      }

      // the check bites on a host with fewer than three processors, where sendAsync's completion started one thread
      // per request (101 for these 100 before the transport had threads of its own)
      assertThat(threads.getTotalStartedThreadCount() - before).as("threads started for 100 webhooks in a row")
          .isLessThan(20);
      assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
          .anyMatch(name -> name.startsWith("idem-webhook-sender-"));
    }
  }

  @Test
  void aClosedTransportSendsNothingAndEveryMessageIsARetry() throws Exception {
    WebhookTransport transport = transport();
    transport.close();

    List<DeliveryResult> results = transport.sendAll(List.of(message("we_1"), message("we_1")));

    assertThat(results).allSatisfy(r -> {
      assertThat(r.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
      assertThat(r.error()).hasValueSatisfying(e -> assertThat(e).contains("closed"));
    });
    assertThat(received).as("nothing reached the endpoint").isEmpty();
  }

  @Test
  void requestsInFlightAreBoundedAndTheBoundIsChecked() {
    try (WebhookTransport one = WebhookTransport.builder(endpoints).timeout(Duration.ofSeconds(5))
        .allowPrivateAddresses(true).maxConcurrentRequests(1).build()) {
      List<DeliveryResult> results = one.sendAll(List.of(message("we_1"), message("we_1"), message("we_1")));

      assertThat(results).allMatch(DeliveryResult::isDelivered);
      assertThat(received).hasSize(3);
    }
    for (int bad : new int[] {0, -1, 4097}) {
      assertThatThrownBy(() -> WebhookTransport.builder(endpoints).maxConcurrentRequests(bad))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxConcurrentRequests must be 1 to 4096");
    }
  }

  @Test
  void anUnreachableEndpointIsARetry() throws Exception {
    WebhookEndpoints closed = WebhookEndpoints.of(new WebhookEndpoint("we_1", URI.create("http://127.0.0.1:9/x"),
        List.of(secret), true));
    DeliveryResult r = WebhookTransport.builder(closed).timeout(Duration.ofSeconds(2)).allowPrivateAddresses(true)
        .build().send(message("we_1"));
    assertThat(r.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(r.error()).hasValueSatisfying(e -> assertThat(e).contains("ConnectException"));
  }

  @Test
  void aBodyThatStallsMidwayIsATimeoutNotAStuckRelay() throws Exception {
    server.createContext("/stall", x -> {
      x.getRequestBody().readAllBytes();
      x.sendResponseHeaders(200, 100);
      x.getResponseBody().write('{');
      x.getResponseBody().flush();
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      x.close();
    });
    URI stall = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/stall");
    WebhookTransport transport = WebhookTransport.builder(WebhookEndpoints.of(
        new WebhookEndpoint("we_s", stall, List.of(secret), true))).timeout(Duration.ofMillis(300))
        .allowPrivateAddresses(true).build();
    long start = System.nanoTime();
    List<DeliveryResult> results = transport.sendAll(List.of(message("we_s"), message("we_s")));
    assertThat(results).extracting(DeliveryResult::kind).containsOnly(DeliveryResult.Kind.RETRY);
    assertThat(results.get(0).error()).hasValueSatisfying(e -> assertThat(e).contains("timed out"));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("bounded by the timeout plus a second")
        .isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void internalAddressesAreRefusedUnlessAllowed() throws Exception {
    DeliveryResult refused = WebhookTransport.builder(endpoints).build().send(message("we_1"));
    assertThat(refused.kind()).isEqualTo(DeliveryResult.Kind.PERMANENT);
    assertThat(refused.error()).hasValueSatisfying(e -> assertThat(e)
        .contains("127.0.0.1 is internal: 127.0.0.0/8 (loopback)"));
    assertThat(received).isEmpty();
    assertThat(transport().send(message("we_1")).isDelivered()).isTrue();
  }

  @Test
  void ambiguousNumericHostsAreRefusedBeforeAnyLookUpEvenWhenPrivateAddressesAreAllowed() {
    List<String> hosts = List.of("0177.0.0.1", "0x7f000001", "0X7F000001", "2130706433", "017700000001",
        "127.0.0.01", "0x");

    for (boolean allowPrivate : List.of(true, false)) {
      List<OutboxMessage> messages = new ArrayList<>();
      List<WebhookEndpoint> list = new ArrayList<>();
      for (String host : allowPrivate ? hosts : List.of("0177.0.0.1", "2130706433", "127.0.0.01")) {
        list.add(new WebhookEndpoint("we_" + list.size(), URI.create("http://" + host + "/hook"), List.of(secret),
            true));
        messages.add(message("we_" + (list.size() - 1)));
      }
      List<DeliveryResult> results = viaTheTestServer(WebhookEndpoints.of(list.toArray(WebhookEndpoint[]::new)),
          allowPrivate).sendAll(messages);

      for (int i = 0; i < results.size(); i++) {
        String host = list.get(i).url().getHost();
        assertThat(results.get(i).kind()).as(host).isEqualTo(DeliveryResult.Kind.PERMANENT);
        assertThat(results.get(i).error()).as(host).hasValueSatisfying(e -> assertThat(e)
            .contains("webhook host " + host + " is an ambiguous numeric form"));
      }
    }
    assertThat(received).as("nothing reached the proxy").isEmpty();
  }

  @Test
  void specialPurposeAddressesAreRefusedWithTheirRangeUnlessPrivateAddressesAreAllowed() {
    Map<String, String> ranges = new LinkedHashMap<>();
    ranges.put("198.18.0.1", "198.18.0.0/15 (benchmarking)");
    ranges.put("198.19.255.254", "198.18.0.0/15 (benchmarking)");
    ranges.put("192.0.2.10", "192.0.2.0/24 (documentation");
    ranges.put("198.51.100.7", "198.51.100.0/24 (documentation");
    ranges.put("203.0.113.9", "203.0.113.0/24 (documentation");
    ranges.put("192.0.0.9", "192.0.0.0/24 (IETF protocol assignments)");
    ranges.put("192.88.99.1", "192.88.99.0/24 (");
    ranges.put("192.31.196.1", "192.31.196.0/24 (");
    ranges.put("192.52.193.1", "192.52.193.0/24 (");
    ranges.put("192.175.48.1", "192.175.48.0/24 (");
    ranges.put("240.0.0.1", "240.0.0.0/4 (reserved)");
    ranges.put("[::ffff:198.18.0.1]", "198.18.0.0/15 (benchmarking)");
    ranges.put("[64:ff9b::c612:1]", "64:ff9b::/96 (");
    ranges.put("[2001:db8::1]", "2001:db8::/32 (documentation)");
    ranges.put("[3fff::1]", "3fff::/20 (documentation)");
    ranges.put("[2002:c612:1::1]", "2002::/16 (6to4)");
    ranges.put("[2001::1]", "2001::/23 (");
    ranges.put("[100::1]", "100::/64 (");
    ranges.put("[5f00::1]", "5f00::/16 (");
    List<WebhookEndpoint> list = new ArrayList<>();
    List<OutboxMessage> messages = new ArrayList<>();
    ranges.keySet().forEach(host -> {
      list.add(new WebhookEndpoint("we_" + list.size(), URI.create("http://" + host + "/hook"), List.of(secret), true));
      messages.add(message("we_" + (list.size() - 1)));
    });
    WebhookEndpoints special = WebhookEndpoints.of(list.toArray(WebhookEndpoint[]::new));

    List<DeliveryResult> refused = viaTheTestServer(special, false).sendAll(messages);
    int reachedBeforeOptOut = received.size();
    List<DeliveryResult> allowed = viaTheTestServer(special, true).sendAll(messages);

    int i = 0;
    for (Map.Entry<String, String> c : ranges.entrySet()) {
      DeliveryResult r = refused.get(i++);
      assertThat(r.kind()).as(c.getKey()).isEqualTo(DeliveryResult.Kind.PERMANENT);
      assertThat(r.error()).as(c.getKey()).hasValueSatisfying(e -> assertThat(e).contains(" is internal: ")
          .contains(c.getValue()).contains("allowPrivateAddresses is off"));
    }
    assertThat(reachedBeforeOptOut).as("nothing reached the proxy while refused").isZero();
    assertThat(allowed).as("allowPrivateAddresses is the one opt-out").allMatch(DeliveryResult::isDelivered);
    assertThat(received).hasSize(ranges.size());
  }

  /**
   * A transport whose client sends every request through the test's server as its HTTP proxy, so that an address
   * outside this machine is written in the request, never connected to.
   */
  WebhookTransport viaTheTestServer(WebhookEndpoints lookup, boolean allowPrivate) {
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .proxy(ProxySelector.of(server.getAddress())).connectTimeout(Duration.ofSeconds(5)).build();
    return WebhookTransport.builder(lookup).timeout(Duration.ofSeconds(5)).allowPrivateAddresses(allowPrivate)
        .httpClient(client).build();
  }
}
