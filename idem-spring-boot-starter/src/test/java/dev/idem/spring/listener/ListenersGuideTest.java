package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idem.outbox.Inbox;
import dev.idem.test.DocSnippets;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import dev.idem.test.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.stereotype.Component;

/**
 * Every snippet of docs/listeners.md, compiled here and run on PostgreSQL, the in-JVM Kafka broker and RabbitMQ; and
 * a check that the guide shows exactly these snippets.
 */
class ListenersGuideTest {
  private static final String GUIDE = "../docs/listeners.md";
  private static final String SELF = "src/test/java/dev/idem/spring/listener/ListenersGuideTest.java";
  private static final List<String> TOPICS = List.of("listeners-payments", "listeners-payments.dlt",
      "listeners-refunds", "listeners-refunds.dlt");
  private static final String QUEUE = "listeners-orders";

  @Component
  public static class Billing {
    private final JdbcTemplate jdbc;

    public Billing(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    // docs/listeners.md:begin kafka
    @KafkaListener(topics = "listeners-payments")
    @IdempotentListener(consumer = "billing")
    public void on(ConsumerRecord<String, String> record) {
      jdbc.update("INSERT INTO listeners_charge (payment_id, body) VALUES (?, ?)", record.key(), record.value());
    }
    // docs/listeners.md:end kafka
  }

  @Component
  public static class Refunds {
    private final JdbcTemplate jdbc;

    public Refunds(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    // docs/listeners.md:begin spel
    @KafkaListener(topics = "listeners-refunds")
    @IdempotentListener(consumer = "refunds", id = "#refundId")
    public void on(@Payload String body, @Header(KafkaHeaders.RECEIVED_KEY) String refundId) {
      jdbc.update("INSERT INTO listeners_refund (refund_id) VALUES (?)", refundId);
    }
    // docs/listeners.md:end spel
  }

  @Component
  public static class Shipping {
    private final JdbcTemplate jdbc;

    public Shipping(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    // docs/listeners.md:begin rabbit
    @RabbitListener(queues = "listeners-orders")
    @IdempotentListener(consumer = "shipping")
    public void ship(Message message) {
      String order = new String(message.getBody(), StandardCharsets.UTF_8);
      jdbc.update("INSERT INTO listeners_shipment (order_id) VALUES (?)", order);
    }
    // docs/listeners.md:end rabbit
  }

  /**
   * The guide's container factory of the application's own, given the starter's error handler: started by
   * {@code ListenerStartupErrorsTest}.
   */
  @Configuration
  static class CustomContainers {
    // docs/listeners.md:begin custom-factory
    @Bean
    ConcurrentKafkaListenerContainerFactory<Object, Object> customContainers(ConsumerFactory<Object, Object> consumers,
        @Qualifier("idemListenerErrorHandler") CommonErrorHandler errorHandler) {
      ConcurrentKafkaListenerContainerFactory<Object, Object> factory = new ConcurrentKafkaListenerContainerFactory<>();
      factory.setConsumerFactory(consumers);
      factory.setCommonErrorHandler(errorHandler); // with a transaction manager on the containers, also:
      // factory.setAfterRollbackProcessor(the bean "idemListenerAfterRollbackProcessor")
      return factory;
    }
    // docs/listeners.md:end custom-factory
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({Billing.class, Refunds.class, Shipping.class})
  static class GuideApp {}

  private static Connection rabbit;
  private static Channel admin;

  @BeforeAll
  static void setUp() throws Exception {
    for (String topic : TOPICS) {
      KafkaBroker.createTopic(topic, 1);
    }
    rabbit = RabbitListenersContract.connect();
    admin = RabbitListenersContract.declare(rabbit, QUEUE, QUEUE + "-dlq");
    dropTables();
    TestPostgres.execute("CREATE TABLE listeners_charge (payment_id VARCHAR(64), body VARCHAR(200))");
    TestPostgres.execute("CREATE TABLE listeners_refund (refund_id VARCHAR(64))");
    TestPostgres.execute("CREATE TABLE listeners_shipment (order_id VARCHAR(64))");
  }

  @AfterAll
  static void tearDown() throws Exception {
    try (Admin kafka = KafkaBroker.admin()) {
      kafka.deleteTopics(TOPICS).all().get(30, TimeUnit.SECONDS);
    }
    admin.queueDelete(QUEUE);
    admin.queueDelete(QUEUE + "-dlq");
    rabbit.close();
    dropTables();
  }

  private static void dropTables() {
    TestPostgres.drop("listeners_charge", "listeners_refund", "listeners_shipment", "listeners_guide_ib",
        "listeners_guide_ob_attempt", "listeners_guide_ob");
  }

  @Test
  void theSnippetsTakeEffectOncePerMessageId() throws Exception {
    String payment = UUID.randomUUID().toString();
    String refund = UUID.randomUUID().toString();
    String order = UUID.randomUUID().toString();
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GuideApp.class).run(
        "--spring.main.web-application-type=none", "--spring.datasource.url=" + TestPostgres.url(),
        "--spring.datasource.username=" + TestPostgres.user(), "--spring.datasource.password=",
        "--spring.datasource.hikari.maximum-pool-size=4", "--idem.outbox.initialize-schema=true",
        "--idem.outbox.table=listeners_guide_ob", "--idem.outbox.inbox-table=listeners_guide_ib",
        "--spring.kafka.bootstrap-servers=" + KafkaBroker.bootstrapServers(),
        "--spring.kafka.consumer.group-id=listeners-guide", "--spring.kafka.consumer.auto-offset-reset=earliest",
        "--spring.rabbitmq.addresses=" + RabbitListenersContract.uri())) {
      try (KafkaProducer<String, String> producer = KafkaListenersContract.producer()) {
        for (int i = 0; i < 2; i++) {
          producer.send(KafkaListenersContract.record("listeners-payments", payment, "{\"amount\":5}"));
          producer.send(new ProducerRecord<>("listeners-refunds", refund, "{\"amount\":2}"));
        }
        producer.flush();
      }
      RabbitListenersContract.publish(admin, QUEUE, order, order);
      RabbitListenersContract.publish(admin, QUEUE, order, order);

      Inbox inbox = context.getBean(Inbox.class);
      Eventually.await("each message processed", ListenersContract.DEADLINE,
          () -> inbox.contains("billing", payment) && inbox.contains("refunds", refund)
              && inbox.contains("shipping", order), done -> done);
      Eventually.await("the copies consumed", ListenersContract.DEADLINE,
          () -> KafkaListenersContract.committed("listeners-guide", "listeners-payments")
              + KafkaListenersContract.committed("listeners-guide", "listeners-refunds"), n -> n == 4);
    }

    assertThat(TestPostgres.count("SELECT COUNT(*) FROM listeners_charge")).isEqualTo(1);
    assertThat(TestPostgres.count("SELECT COUNT(*) FROM listeners_refund")).isEqualTo(1);
    assertThat(TestPostgres.count("SELECT COUNT(*) FROM listeners_shipment")).isEqualTo(1);
    assertThat(admin.queueDeclarePassive(QUEUE).getMessageCount()).isZero();
  }

  @Test
  void theGuideShowsExactlyTheseSnippets() {
    Map<String, String> regions = DocSnippets.regions(Path.of(SELF), "docs/listeners.md");
    List<String> shown = DocSnippets.javaBlocks(Path.of(GUIDE));
    for (String block : shown) {
      assertThat(regions).as("a region of %s for the guide's block\n%s", SELF, block).containsValue(block);
    }
    assertThat(shown).as("every region is shown in the guide").containsExactlyInAnyOrderElementsOf(regions.values());
  }
}
