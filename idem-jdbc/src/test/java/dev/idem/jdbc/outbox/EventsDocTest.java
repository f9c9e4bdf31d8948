package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.events.EventRoute;
import dev.idem.outbox.events.Events;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** docs/events.md's plain Java example, compiled and run on H2; and a check that the page shows exactly this code. */
class EventsDocTest {
  /** The application's event. */
  record PaymentSucceeded(String paymentId, String account, long amount) {}

  /** Stands for the application's JSON mapper ({@code objectMapper::writeValueAsString}). */
  static final class Json {
    String write(Object event) {
      PaymentSucceeded p = (PaymentSucceeded) event;
      return "{\"paymentId\":\"" + p.paymentId() + "\",\"amount\":" + p.amount() + "}";
    }
  }

  static void example(DataSource dataSource, String table, Json json, String paymentId, CountDownLatch sent)
      throws Exception {
    // events.md:begin
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(dataSource).table(table).build())
        .orderedTypes(Set.of("payment.succeeded"))
        .build();
    Events events = Events.builder(outbox)
        .serializer(json::write)
        .route(EventRoute.of(PaymentSucceeded.class, "payment.succeeded", "webhook:payments")
            .orderedBy("account", PaymentSucceeded::account))
        .build();
    OutboxRelay relay = OutboxRelay.builder(outbox)
        .route("webhook", message -> {
          sent.countDown(); // a real application sends it: WebhookTransport, RabbitMqTransport, ...
          return DeliveryResult.delivered();
        })
        .build();
    relay.start(); // woken after each commit below, not only every 50 ms

    events.inTransaction(tx -> {
      try (PreparedStatement insert = JdbcTransaction.connectionOf(tx)
          .prepareStatement("INSERT INTO payment (id) VALUES (?)")) {
        insert.setString(1, paymentId);
        insert.executeUpdate();
      }
      Events.publish(new PaymentSucceeded(paymentId, "acc_7", 1250)); // written with the insert, or not at all
      return null;
    });
    // events.md:end
    try {
      assertThat(sent.await(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      relay.close();
    }
  }

  @Test
  void theExampleWritesTheEventWithThePaymentAndTheRelaySendsIt() throws Exception {
    DataSource ds = Databases.pool(JdbcDialect.H2);
    String table = Databases.freshTables(JdbcDialect.H2, "obd_h2", "ibd_h2");
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS payment");
      st.execute("CREATE TABLE payment (id VARCHAR(64) PRIMARY KEY)");
    }
    CountDownLatch sent = new CountDownLatch(1);
    example(ds, table, new Json(), "pay_1", sent);
    assertThat(Outbox.builder(JdbcOutboxStore.builder(ds).table(table).build()).build()
        .list(OutboxQuery.all()).entries()).singleElement().satisfies(e -> {
          assertThat(e.type()).isEqualTo("payment.succeeded");
          assertThat(e.aggregateId()).isEqualTo("acc_7");
          assertThat(e.payload()).isEqualTo("{\"paymentId\":\"pay_1\",\"amount\":1250}");
        });
  }

  @Test
  void thePageShowsTheExampleVerbatim() throws Exception {
    List<String> code = new ArrayList<>();
    boolean in = false;
    for (String line : Files.readAllLines(Path.of("src/test/java/dev/idem/jdbc/outbox/EventsDocTest.java"))) {
      if (line.strip().equals("// events.md:end")) {
        break;
      }
      if (in) {
        code.add(line.length() >= 4 ? line.substring(4) : line.strip());
      }
      in |= line.strip().equals("// events.md:begin");
    }
    assertThat(code).hasSizeGreaterThan(10);
    assertThat(Files.readString(Path.of("../docs/events.md"))).contains("```java\n" + String.join("\n", code)
        + "\n```");
  }
}
