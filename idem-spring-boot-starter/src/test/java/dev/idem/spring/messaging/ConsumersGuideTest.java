package dev.idem.spring.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import dev.idem.outbox.InboxHandler;
import dev.idem.test.DocSnippets;
import dev.idem.test.Eventually;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * docs/consumers.md's handler, compiled here as the bean of an application whose RabbitMQ consumer comes from
 * properties, on the real RabbitMQ and an in-memory H2 database: a message delivered twice makes one shipment row,
 * with the message's own bytes; and a check that the guide shows exactly this bean and its imports.
 */
class ConsumersGuideTest {
  private static final Path SELF = Path.of("src/test/java/dev/idem/spring/messaging/ConsumersGuideTest.java");

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class GuideApp {
    // docs/consumers.md:begin handler
    @Bean
    InboxHandler shipOrder(JdbcTemplate jdbc) {
      return (tx, event) -> {
        Delivery delivery = event.message(Delivery.class); // the broker's own message, if needed
        jdbc.update("INSERT INTO shipment (order_id, body) VALUES (?, ?)", event.eventId(), event.payload());
        return "shipped";
      };
    }
    // docs/consumers.md:end handler
  }

  private final String queue = "idem-guide-q-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
  private Connection rabbit;
  private Channel admin;
  private ConfigurableApplicationContext context;

  @BeforeEach
  void setUp() throws Exception {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(RabbitMqConsumersStarterTest.uri());
    rabbit = factory.newConnection("idem-consumers-guide");
    admin = rabbit.createChannel();
    admin.queueDeclare(queue, true, false, false, null);
    context = new SpringApplicationBuilder(GuideApp.class).run("--spring.main.web-application-type=none",
        "--spring.datasource.url=jdbc:h2:mem:consumers-guide-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.outbox.initialize-schema=true", "--idem.consumers.rabbitmq.uri=" + RabbitMqConsumersStarterTest.uri(),
        "--idem.consumers.shipping.handler=shipOrder", "--idem.consumers.shipping.rabbitmq.queue=" + queue);
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      admin.queueDelete(queue);
    } finally {
      rabbit.close();
    }
  }

  @Test
  void aMessageDeliveredTwiceShipsOnce() throws Exception {
    JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
    jdbc.execute("CREATE TABLE IF NOT EXISTS shipment (order_id VARCHAR(100) PRIMARY KEY, body VARBINARY(1000))");
    String id = "ord-" + UUID.randomUUID();
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(id).build();
    byte[] body = "{\"order\":42}".getBytes(StandardCharsets.UTF_8);
    admin.basicPublish("", queue, props, body);
    admin.basicPublish("", queue, props, body);

    Eventually.await("both copies acknowledged", Duration.ofSeconds(30), this::settled, done -> done);

    assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM shipment WHERE order_id = ?", Integer.class, id))
        .isEqualTo(1);
    assertThat(jdbc.queryForObject("SELECT body FROM shipment WHERE order_id = ?", byte[].class, id))
        .isEqualTo(body);
  }

  /** One copy processed, the other acknowledged as a duplicate, as the consumer's meters count them. */
  private boolean settled() {
    MeterRegistry meters = context.getBean(MeterRegistry.class);
    return count(meters, "idem.consumer.processed") == 1 && count(meters, "idem.consumer.duplicates") == 1;
  }

  private static double count(MeterRegistry meters, String name) {
    Counter c = meters.find(name).tag("consumer", "shipping").counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void theGuideShowsThisBeanWithItsImports() throws Exception {
    String bean = DocSnippets.regions(SELF, "docs/consumers.md").get("handler");
    String block = DocSnippets.javaBlocks(Path.of("../docs/consumers.md")).stream()
        .filter(b -> b.contains("InboxHandler shipOrder(")).findFirst().orElseThrow();
    List<String> imports = block.lines().takeWhile(l -> l.startsWith("import ")).toList();

    assertThat(imports).isNotEmpty();
    assertThat(Files.readAllLines(SELF)).containsAll(imports);
    assertThat(block).isEqualTo(String.join("\n", imports) + "\n\n" + bean);
  }
}
