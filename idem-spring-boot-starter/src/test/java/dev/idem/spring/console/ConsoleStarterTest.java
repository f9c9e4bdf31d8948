package dev.idem.spring.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.console.ConsoleServlet;
import dev.idem.core.Idem;
import dev.idem.core.RecordState;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxStatus;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The console auto-configured in a running Spring Boot application on PostgreSQL: mounted at
 * {@code idem.console.path} with the application's authorizer and audit, the outbox's views and actions, the charts
 * from the meters, and the JDBC key search.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleStarterTest {
  static final String RECORDS = "idem_console_starter_record";
  static final String OUTBOX = "idem_console_starter_outbox";
  static final String INBOX = "idem_console_starter_inbox";

  private ConfigurableApplicationContext context;
  private ConsoleApp app;
  private HttpClient http;
  private int port;

  @BeforeAll
  void start() {
    context = ConsoleStarter.run("/ops/console");
    app = context.getBean(ConsoleApp.class);
    port = ((WebServerApplicationContext) context).getWebServer().getPort();
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  @AfterAll
  void stop() {
    if (context != null) {
      context.close();
    }
  }

  @Test
  void theConsoleIsMountedAtThePathWithTheApplicationsAuthorizerAndEveryView() throws Exception {
    HttpResponse<String> page = get("/ops/console/", null);
    HttpResponse<String> refused = get("/ops/console/api/session", null);
    HttpResponse<String> session = get("/ops/console/api/session", ConsoleApp.TOKEN);
    HttpResponse<String> metrics = get("/ops/console/api/metrics", ConsoleApp.TOKEN);
    HttpResponse<String> defaultPath = get("/idem/console/", null);

    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Security-Policy")).hasValue(ConsoleServlet.CONTENT_SECURITY_POLICY);
    assertThat(refused.statusCode()).isEqualTo(401);
    assertThat(session.statusCode()).as(session.body()).isEqualTo(200);
    assertThat(session.body()).contains("\"operator\":\"ops\"", "\"outbox\":true", "\"metrics\":true",
        "\"store\":\"" + context.getBean(Idem.class).store().name() + "\"");
    assertThat(metrics.body()).contains("\"requests\"", "\"replay_key_age\"");
    assertThat(defaultPath.statusCode()).as("mounted at idem.console.path only").isEqualTo(404);
    assertThat(context.getBean(IdemConsoleAutoConfiguration.REGISTRATION_BEAN, ServletRegistrationBean.class)
        .getUrlMappings()).containsExactly("/ops/console/*");
  }

  @Test
  void anUncertainRecordIsFoundAndResolvedAndADeadLetterReplayedWithTheOperatorAudited() throws Exception {
    String key = ConsoleStarter.uncertainRecord(context, "starter");
    String aggregate = "order-" + UUID.randomUUID();
    UUID event = deadEvent(aggregate);

    HttpResponse<String> found = get("/ops/console/api/records?state=any&key=" + key, ConsoleApp.TOKEN);
    HttpResponse<String> resolved = post("/ops/console/api/records/resolve?scope=tenant-a&operation=POST+%2Forders"
        + "&key=" + key + "&version=" + ConsoleStarter.version(context, key),
        "{\"action\":\"fail\",\"status\":409,\"body\":{\"error\":\"declined\"},\"reason\":\"the provider declined\"}");
    app.endpointUp.set(true);
    HttpResponse<String> replayed = post("/ops/console/api/outbox/" + event + "/replay", "");

    assertThat(found.body()).contains("\"key\":\"" + key + "\"", "\"state\":\"uncertain\"");
    assertThat(resolved.statusCode()).as(resolved.body()).isEqualTo(200);
    assertThat(resolved.body()).contains("\"actor\":\"ops (console)\"", "\"to\":\"failed\"");
    assertThat(ConsoleStarter.state(context, key)).isEqualTo(RecordState.FAILED);
    assertThat(replayed.statusCode()).as(replayed.body()).isEqualTo(200);
    Outbox outbox = context.getBean(Outbox.class);
    Eventually.await("the replayed event is delivered", Duration.ofSeconds(20),
        () -> outbox.find(event).orElseThrow().status(), s -> s == OutboxStatus.DELIVERED);
    assertThat(app.actions).filteredOn(a -> a.target().contains(key) || a.target().contains(event.toString()))
        .extracting(a -> a.operator() + " " + a.action() + " " + a.outcome())
        .containsExactly("ops record.resolve done", "ops outbox.replay done");
  }

  private UUID deadEvent(String aggregate) {
    Outbox outbox = context.getBean(Outbox.class);
    DataSource dataSource = context.getBean(DataSource.class);
    OutboxEvent event = OutboxEvent.builder("order.paid").aggregate("order", aggregate)
        .payload("{\"order\":\"" + aggregate + "\"}").destination("hook:orders").build();
    new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(status ->
        outbox.enqueue(JdbcTransaction.of(DataSourceUtils.getConnection(dataSource)), event));
    Eventually.await("the event is dead", Duration.ofSeconds(20), () -> outbox.find(event.id()).orElseThrow()
        .status(), s -> s == OutboxStatus.DEAD);
    return event.id();
  }

  private HttpResponse<String> get(String path, String token) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private HttpResponse<String> post(String path, String json) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Authorization", "Bearer " + ConsoleApp.TOKEN).header("X-Idem-Console", "1")
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build();
    return http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  static {
    // the tables of the earlier run go, so that counts start afresh
    TestPostgres.drop(RECORDS + "_audit", RECORDS, OUTBOX + "_attempt", OUTBOX, INBOX);
  }
}
