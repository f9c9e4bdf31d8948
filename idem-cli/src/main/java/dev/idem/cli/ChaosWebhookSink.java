package dev.idem.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookVerifier;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.h2.jdbcx.JdbcDataSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The tenants' webhook receiver of a chaos run: an HTTP server on 127.0.0.1 in this JVM, one path per tenant
 * ({@code /hooks/<tenant>}). It verifies every signature with the tenant's secret ({@link WebhookVerifier}), then
 * fails a seeded fraction of deliveries with 500, half before any effect and half after the effect committed (so the
 * relay re-sends events the sink has already applied), and applies the others through an {@link Inbox} on an
 * in-memory H2 database keyed by {@code webhook-id}: the effect (a row in {@code sink_effect}) must exist once per
 * event however often it arrives. Thread-safe.
 */
final class ChaosWebhookSink implements AutoCloseable {
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final int MAX_BODY = 1 << 20;

  private final HttpServer server;
  private final ExecutorService executor;
  private final JdbcDataSource dataSource;
  private final Inbox inbox;
  private final Map<String, WebhookVerifier> verifiers = new ConcurrentHashMap<>();
  private final SplittableRandom random;
  private final double failBefore;
  private final double failAfter;
  private final BiConsumer<String, String> ownership;
  private final Map<String, AtomicLong> deliveriesPerId = new ConcurrentHashMap<>();
  final AtomicLong received = new AtomicLong();
  final AtomicLong badSignatures = new AtomicLong();
  final AtomicLong failedBefore = new AtomicLong();
  final AtomicLong failedAfter = new AtomicLong();
  final AtomicLong processed = new AtomicLong();
  final AtomicLong duplicates = new AtomicLong();

  /**
   * @param ownership told (tenant, object id) for every verified event, for the cross-tenant check
   */
  ChaosWebhookSink(String runId, long seed, double failBefore, double failAfter, BiConsumer<String, String> ownership)
      throws IOException, SQLException {
    this.random = new SplittableRandom(seed);
    this.failBefore = failBefore;
    this.failAfter = failAfter;
    this.ownership = ownership;
    dataSource = new JdbcDataSource();
    dataSource.setURL("jdbc:h2:mem:idem_chaos_sink_" + runId + ";DB_CLOSE_DELAY=-1");
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE sink_effect (event_id VARCHAR(255) NOT NULL, tenant VARCHAR(64) NOT NULL,"
          + " event_type VARCHAR(64) NOT NULL, object_id VARCHAR(64))");
    }
    inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).createSchemaIfMissing(true).build()).build();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    executor = Executors.newFixedThreadPool(8, r -> {
      Thread t = new Thread(r, "chaos-sink");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/hooks/", this::handle);
    server.start();
  }

  String url(String tenant) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/hooks/" + tenant;
  }

  void addTenant(String tenant, String secret) {
    verifiers.put(tenant, WebhookVerifier.builder(WebhookSecret.parse(secret)).build());
  }

  /** Verified deliveries per webhook-id (every attempt that reached the sink with a good signature). */
  Map<String, Long> deliveries() {
    Map<String, Long> out = new HashMap<>();
    deliveriesPerId.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  /** How many times each event's effect was applied: one row per application. */
  Map<String, Long> effects() throws SQLException {
    Map<String, Long> out = new HashMap<>();
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT event_id, COUNT(*) FROM sink_effect GROUP BY event_id")) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getLong(2));
      }
    }
    return out;
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String tenant = exchange.getRequestURI().getPath().substring("/hooks/".length());
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readNBytes(MAX_BODY);
      }
      received.incrementAndGet();
      WebhookVerifier verifier = verifiers.get(tenant);
      String id = exchange.getRequestHeaders().getFirst("webhook-id");
      try {
        if (verifier == null || !exchange.getRequestMethod().equals("POST")) {
          throw new IllegalArgumentException("no such hook");
        }
        verifier.verify(id, exchange.getRequestHeaders().getFirst("webhook-timestamp"),
            exchange.getRequestHeaders().getFirst("webhook-signature"), body);
      } catch (RuntimeException e) {
        badSignatures.incrementAndGet();
        answer(exchange, 401, "{\"error\":\"signature\"}");
        return;
      }
      deliveriesPerId.computeIfAbsent(id, k -> new AtomicLong()).incrementAndGet();
      double draw;
      synchronized (random) {
        draw = random.nextDouble();
      }
      if (draw < failBefore) {
        failedBefore.incrementAndGet();
        answer(exchange, 500, "{\"error\":\"injected before the effect\"}");
        return;
      }
      JsonNode event = JSON.readTree(body);
      String type = event.path("type").asString();
      String objectId = event.path("data").path("id").asString();
      ownership.accept(tenant, objectId);
      InboxEvent inboxEvent = new InboxEvent(id, tenant, body);
      InboxResult result = inbox.processBatchAndCommit("chaos-sink", List.of(inboxEvent), (tx, e) -> {
        try (PreparedStatement ps = tx.unwrap(Connection.class).prepareStatement(
            "INSERT INTO sink_effect (event_id, tenant, event_type, object_id) VALUES (?, ?, ?, ?)")) {
          ps.setString(1, id);
          ps.setString(2, tenant);
          ps.setString(3, type);
          ps.setString(4, objectId);
          ps.executeUpdate();
        }
        return "applied";
      }).get(0);
      (result.duplicate() ? duplicates : processed).incrementAndGet();
      if (draw < failBefore + failAfter) {
        failedAfter.incrementAndGet();
        answer(exchange, 500, "{\"error\":\"injected after the effect\"}");
        return;
      }
      answer(exchange, 200, "{\"received\":true}");
    } catch (RuntimeException e) {
      // Anything unexpected is a 500 as well: the relay will try again, and the report shows it in the counts.
      try {
        answer(exchange, 500, "{\"error\":\"sink\"}");
      } catch (IOException ignored) {
        // the answer could not be sent; the relay times out and tries again
      }
    }
  }

  private static void answer(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  Set<String> tenants() {
    return Set.copyOf(verifiers.keySet());
  }

  List<Long> counts() {
    return List.of(received.get(), processed.get(), duplicates.get());
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
