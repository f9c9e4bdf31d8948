package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Codec;
import dev.idem.core.Idem;
import dev.idem.core.RecordKey;
import dev.idem.core.ReplayedFailureException;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import dev.idem.test.DocSnippets;
import dev.idem.test.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Every snippet of docs/methods.md, compiled here and run on PostgreSQL; and a check that the guide shows exactly
 * these snippets.
 */
class MethodsGuideTest {
  private static final String GUIDE = "../docs/methods.md";
  private static final String SELF = "src/test/java/dev/idem/spring/method/MethodsGuideTest.java";
  private static final String TENANT = "guide-" + UUID.randomUUID().toString().substring(0, 8);
  private static final AtomicInteger PLACED = new AtomicInteger();

  record PlaceOrder(String id, String tenant, String sku, int quantity) {}

  record Receipt(String orderId, String sku, int quantity) {}

  static final class OutOfStockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    OutOfStockException(String sku) {
      super("sku " + sku + " is out of stock");
    }
  }

  /** Stands for the application's own code: one insert, then the receipt. */
  static Receipt insertOrder(Connection c, PlaceOrder order) throws SQLException {
    if (order.sku().equals("none")) {
      throw new OutOfStockException(order.sku());
    }
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO idem_guide_order (id) VALUES (?)")) {
      ps.setString(1, order.tenant() + "/" + order.id());
      ps.executeUpdate();
    }
    PLACED.incrementAndGet();
    return new Receipt(order.id(), order.sku(), order.quantity());
  }

  /** A codec for the snippets that need no library: {@code id|sku|quantity}. */
  static final Codec<Receipt> RECEIPTS = new Codec<>() {
    @Override
    public String contentType() {
      return "text/plain";
    }

    @Override
    public byte[] encode(Receipt r) {
      return (r.orderId() + "|" + r.sku() + "|" + r.quantity()).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Receipt decode(byte[] bytes) {
      String[] parts = new String(bytes, StandardCharsets.UTF_8).split("\\|");
      return new Receipt(parts[0], parts[1], Integer.parseInt(parts[2]));
    }
  };

  private static byte[] json(PlaceOrder order) {
    return ("{\"id\":\"" + order.id() + "\",\"sku\":\"" + order.sku() + "\",\"quantity\":" + order.quantity() + "}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static void createTable(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection(); var st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS idem_guide_order (id VARCHAR(200) PRIMARY KEY)");
    }
  }

  /** The guide's record table on the test PostgreSQL, with the order table beside it. */
  private static JdbcIdempotencyStore store() throws SQLException {
    createTable(TestPostgres.postgres());
    return JdbcIdempotencyStore.builder(TestPostgres.postgres()).table("idem_guide_record")
        .createSchemaIfMissing(true).build();
  }

  static Receipt place(Idem idem, PlaceOrder order) {
    // docs/methods.md:begin core-call
    Receipt receipt = idem.call(RecordKey.of(order.tenant(), "orders.place", order.id()))
        .fingerprintJson(json(order))
        .keepFailures(e -> e instanceof OutOfStockException)
        .atomic(RECEIPTS, tx -> insertOrder(tx.unwrap(Connection.class), order))
        .value();
    // docs/methods.md:end core-call
    return receipt;
  }

  @Test
  void theCoreCall() throws Exception {
    Idem idem = Idem.builder().name("guide").store(store()).build();
    PlaceOrder order = new PlaceOrder("o-1", TENANT, "apple", 2);
    int before = PLACED.get();

    assertThat(place(idem, order)).isEqualTo(place(idem, order));
    assertThat(PLACED.get() - before).isEqualTo(1);
    PlaceOrder none = new PlaceOrder("o-2", TENANT, "none", 1);
    assertThatThrownBy(() -> place(idem, none)).isInstanceOf(OutOfStockException.class);

    assertThatThrownBy(() -> placeAgain(idem, none)).isInstanceOf(OutOfStockException.class)
        .hasMessage("sku none is out of stock");
    assertThat(PLACED.get() - before).isEqualTo(1);
  }

  static Receipt placeAgain(Idem idem, PlaceOrder order) {
    // docs/methods.md:begin replayed-failure
    try {
      return place(idem, order);
    } catch (ReplayedFailureException e) {
      if (e.isOf(OutOfStockException.class)) {
        throw new OutOfStockException(order.sku());   // the first call's answer, again
      }
      throw e;
    }
    // docs/methods.md:end replayed-failure
  }

  @Test
  void theCoreCallInTheCallersTransaction() throws Exception {
    DataSource dataSource = TestPostgres.postgres();
    JdbcIdempotencyStore store = store();
    Idem idem = Idem.builder().name("guide").store(store).build();
    PlaceOrder order = new PlaceOrder("o-3", TENANT, "pear", 1);

    // docs/methods.md:begin core-join
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (JdbcIdempotencyStore.Binding bound = store.useConnection(c)) {
        Receipt receipt = idem.call(RecordKey.of(order.tenant(), "orders.place", order.id()))
            .fingerprintJson(json(order))
            .atomic(RECEIPTS, tx -> insertOrder(c, order))   // tx.unwrap(Connection.class) == c
            .value();
        c.commit();                                           // the order and the record, or neither
      } finally {
        c.setAutoCommit(true);
      }
    }
    // docs/methods.md:end core-join
    assertThat(store.find(RecordKey.of(TENANT, "orders.place", "o-3"))).isPresent();
  }

  @Test
  void leasedCallsNeedNoTransaction() throws Exception {
    Idem idem = Idem.builder().name("guide").store(store()).build();
    AtomicInteger sent = new AtomicInteger();
    String messageId = "m-" + UUID.randomUUID();
    for (int i = 0; i < 2; i++) {
      // docs/methods.md:begin core-leased
      String receipt = idem.call(RecordKey.of("mailer", "mail.send", messageId))
          .leased(Codec.utf8(), () -> "sent " + sent.incrementAndGet())
          .value();
      // docs/methods.md:end core-leased
      assertThat(receipt).isEqualTo("sent 1");
    }
  }

  // docs/methods.md:begin spring-service
  @Service
  public static class Orders {
    private final JdbcTemplate jdbc;

    public Orders(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Idempotent(key = "#order.id", scope = "#order.tenant", fingerprint = "#order",
        keepExceptions = OutOfStockException.class)
    @Transactional
    public Receipt place(PlaceOrder order) {
      if (order.sku().equals("none")) {
        throw new OutOfStockException(order.sku());
      }
      jdbc.update("INSERT INTO idem_guide_order (id) VALUES (?)", order.tenant() + "/" + order.id());
      return new Receipt(order.id(), order.sku(), order.quantity());
    }

    @Idempotent(key = "'daily-report-' + #day", mode = IdempotentRoute.Mode.LEASED, waitInFlight = "30s")
    public List<String> dailyReport(String day) {
      return List.of("report for " + day);
    }
  }
  // docs/methods.md:end spring-service

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Orders.class)
  static class GuideApp {}

  @Test
  void theSpringService() throws Exception {
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GuideApp.class)
        .web(WebApplicationType.NONE).run("--spring.datasource.url=" + TestPostgres.url(),
            "--spring.datasource.username=" + TestPostgres.user(), "--spring.datasource.password=",
            "--idem.store.initialize-schema=true", "--idem.store.table=idem_guide_record")) {
      createTable(context.getBean(DataSource.class));
      Orders orders = context.getBean(Orders.class);
      PlaceOrder order = new PlaceOrder("s-1", TENANT, "plum", 3);
      assertThat(orders.place(order)).isEqualTo(orders.place(order));
      assertThat(orders.dailyReport("2026-11-27")).isEqualTo(orders.dailyReport("2026-11-27"));
      assertThatThrownBy(() -> orders.place(new PlaceOrder("s-2", TENANT, "none", 1)))
          .isInstanceOf(OutOfStockException.class);
      assertThatThrownBy(() -> orders.place(new PlaceOrder("s-2", TENANT, "none", 1)))
          .isInstanceOf(ReplayedFailureException.class);
    }
  }

  @Test
  void theGuideShowsExactlyTheseSnippets() {
    Map<String, String> regions = DocSnippets.regions(Path.of(SELF), "docs/methods.md");
    List<String> shown = DocSnippets.javaBlocks(Path.of(GUIDE));
    for (String block : shown) {
      assertThat(regions).as("a region of %s for the guide's block\n%s", SELF, block).containsValue(block);
    }
    assertThat(shown).as("every region is shown in the guide").containsExactlyInAnyOrderElementsOf(regions.values());
  }
}
