package dev.idem.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxRelay;
import dev.idem.test.DocSnippets;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * docs/console.md's plain servlet example, compiled here and served by Jetty on H2: it answers the allowed host with
 * the operator's name, refuses any other host, and audits an eviction; and a check that the guide shows exactly this
 * code, and the authorizer SPI as the interface declares it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleGuideTest {
  private static final Path SELF = Path.of("src/test/java/dev/idem/console/ConsoleGuideTest.java");
  private static final Path GUIDE = Path.of("../docs/console.md");
  private static final String HOST = "ops.example.com";

  /** Stands for the application's audit trail. */
  static final class AuditLog {
    final List<ConsoleAction> written = new CopyOnWriteArrayList<>();

    void write(ConsoleAction action) {
      written.add(action);
    }
  }

  private final AuditLog auditLog = new AuditLog();
  private final String consoleToken = "guide-" + UUID.randomUUID();
  private HikariDataSource dataSource;
  private OutboxRelay relay;
  private Server server;
  private Idem idem;
  private int port;

  @BeforeAll
  void serve() throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl("jdbc:h2:mem:console-guide-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    config.setUsername("sa");
    config.setMaximumPoolSize(4);
    dataSource = new HikariDataSource(config);
    JdbcIdempotencyStore.builder(dataSource).createSchemaIfMissing(true).build();
    relay = OutboxRelay.builder(Outbox.builder(JdbcOutboxStore.builder(dataSource).createSchemaIfMissing(true)
        .build()).build()).name("console-guide").route("hook", message -> DeliveryResult.delivered(), 1).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    idem = mount(dataSource, relay, consoleToken, auditLog, context);
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
  }

  private static Idem mount(DataSource dataSource, OutboxRelay relay, String consoleToken, AuditLog auditLog,
      ServletContextHandler context) {
    // docs/console.md:begin plain
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).build();
    Idem idem = Idem.builder().store(store).build();
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(dataSource).build()).build();

    ConsoleServlet console = ConsoleServlet.builder(idem)
        .outbox(outbox, relay)                         // optional: the Outbox tab
        .search(JdbcRecordSearch.of(store))            // the key search in the store's table
        .authorizer(ConsoleAuthorizer.bearerToken(consoleToken, "ops"))
        .allowedHosts(List.of("ops.example.com"))
        .audit(action -> auditLog.write(action))       // optional: default is a log line
        .hints(r -> r.state() == RecordState.UNCERTAIN // optional: shown with the record
            ? Map.of("provider key", r.derive("charge")) : Map.of())
        .build();
    context.addServlet(new ServletHolder(console), "/idem/console/*");   // Jetty; web.xml or addServlet elsewhere
    // docs/console.md:end plain
    return idem;
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (relay != null) {
      relay.close();
    }
    if (dataSource != null) {
      dataSource.close();
    }
  }

  @Test
  void theAllowedHostGetsTheOperatorAndAnyOtherHostIsRefused() throws Exception {
    String session = "GET /idem/console/api/session HTTP/1.1\r\nAuthorization: Bearer " + consoleToken
        + "\r\nConnection: close\r\nHost: ";

    assertThat(raw(session + HOST + "\r\n\r\n")).startsWith("HTTP/1.1 200").contains("\"operator\":\"ops\"",
        "\"outbox\":true");
    assertThat(raw(session + "127.0.0.1:" + port + "\r\n\r\n")).startsWith("HTTP/1.1 403")
        .contains("CONSOLE.host_not_allowed");
    assertThat(raw("GET /idem/console/api/session HTTP/1.1\r\nHost: " + HOST + "\r\nConnection: close\r\n\r\n"))
        .as("no token").startsWith("HTTP/1.1 401");
  }

  @Test
  void anEvictionTakesEffectAndGoesToTheAuditLog() throws Exception {
    RecordKey key = RecordKey.of("guide", "POST /orders", "k-" + UUID.randomUUID());
    Execution stored = idem.atomic(IdempotentRequest.of(key, "{}".getBytes(StandardCharsets.UTF_8),
        "application/json"), tx -> StoredResponse.of(201, Map.of(), "{\"id\":1}".getBytes(StandardCharsets.UTF_8)));
    assertThat(stored.outcome()).isEqualTo(Execution.Outcome.STORED);
    long version = idem.store().find(key).orElseThrow().version();
    String query = "scope=guide&operation=" + URLEncoder.encode("POST /orders", StandardCharsets.UTF_8) + "&key="
        + key.key().value() + "&version=" + version;

    String evicted = raw("DELETE /idem/console/api/records?" + query + " HTTP/1.1\r\nHost: " + HOST
        + "\r\nAuthorization: Bearer " + consoleToken + "\r\nX-Idem-Console: 1\r\nContent-Length: 0"
        + "\r\nConnection: close\r\n\r\n");

    assertThat(evicted).startsWith("HTTP/1.1 200");
    assertThat(idem.store().find(key)).isEmpty();
    assertThat(auditLog.written).anySatisfy(a -> {
      assertThat(a.operator()).isEqualTo("ops");
      assertThat(a.action()).isEqualTo("record.evict");
      assertThat(a.done()).isTrue();
    });
  }

  @Test
  void theGuideShowsThisCodeAndTheAuthorizerAsDeclared() throws Exception {
    Map<String, String> regions = DocSnippets.regions(SELF, "docs/console.md");
    List<String> blocks = DocSnippets.javaBlocks(GUIDE);
    assertThat(blocks).contains(regions.get("plain"));

    String spi = blocks.stream().filter(b -> b.contains("public interface ConsoleAuthorizer")).findFirst()
        .orElseThrow();
    String declared = Files.readString(Path.of("src/main/java/dev/idem/console/ConsoleAuthorizer.java"));
    for (String line : spi.split("\n")) {
      assertThat(declared).as("the guide's SPI line is the interface's").contains(line.strip());
    }
  }

  private String raw(String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
