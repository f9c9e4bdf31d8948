package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

/**
 * {@code payments.kafka.*}: how the settings bind (event types hold dots, so the topic map's keys are written with or
 * without brackets), which types go to which topic, and bad values stopping the service at startup with a message
 * that names the property.
 */
class KafkaSettingsTest {
  private static final String SERVERS = "127.0.0.1:9092";

  @Test
  void kafkaIsOffByDefaultAndThenPublishesNothing() {
    PaymentsProperties.Kafka kafka = bind(Map.of());

    assertThat(kafka.enabled()).isFalse();
    assertThat(kafka.sendTimeout()).isEqualTo(Duration.ofSeconds(15));
    assertThat(kafka.topics()).isEmpty();
    assertThat(kafka.topicOf("payment.succeeded")).isEmpty();
    assertThat(bind(Map.of("payments.kafka.bootstrap-servers", " ", "payments.kafka.default-topic", "payments"))
        .topicOf("payment.succeeded")).as("blank servers: off").isEmpty();
  }

  @Test
  void topicKeysWithDotsBindWithBracketsAndWithout() {
    PaymentsProperties.Kafka kafka = bind(Map.of(
        "payments.kafka.bootstrap-servers", SERVERS,
        "payments.kafka.topics[payment.succeeded]", "payments",
        "payments.kafka.topics.payment.declined", "declines",
        "payments.kafka.properties[security.protocol]", "PLAINTEXT",
        "payments.kafka.properties.client.dns.lookup", "use_all_dns_ips"));

    assertThat(kafka.topics()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "payment.succeeded", "payments", "payment.declined", "declines"));
    assertThat(kafka.properties()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "security.protocol", "PLAINTEXT", "client.dns.lookup", "use_all_dns_ips"));
  }

  @Test
  void topicKeysWithDotsBindFromYamlPlainNestedOrInQuotedBrackets() throws Exception {
    String yaml = String.join("\n",
        "payments:",
        "  kafka:",
        "    bootstrap-servers: " + SERVERS,
        "    topics:",
        "      payment.succeeded: payments",
        "      payment:",
        "        declined: declines",
        "      \"[refund.succeeded]\": refunds",
        "");
    List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("test.yaml",
        new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));

    PaymentsProperties.Kafka kafka = new Binder(ConfigurationPropertySources.from(sources))
        .bindOrCreate("payments.kafka", PaymentsProperties.Kafka.class);

    assertThat(kafka.topics()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "payment.succeeded", "payments", "payment.declined", "declines", "refund.succeeded", "refunds"));
  }

  @Test
  void aTypeGoesToItsOwnTopicElseToTheDefaultUnlessItsTopicIsBlank() {
    PaymentsProperties.Kafka withDefault = bind(Map.of(
        "payments.kafka.bootstrap-servers", SERVERS,
        "payments.kafka.topics[payment.succeeded]", "payments",
        "payments.kafka.topics[payment.declined]", "",
        "payments.kafka.default-topic", "events"));
    PaymentsProperties.Kafka withoutDefault = bind(Map.of(
        "payments.kafka.bootstrap-servers", SERVERS,
        "payments.kafka.topics[payment.succeeded]", "payments"));

    assertThat(withDefault.topicOf("payment.succeeded")).contains("payments");
    assertThat(withDefault.topicOf("payment.declined")).as("a blank topic leaves the type out").isEmpty();
    assertThat(withDefault.topicOf("refund.succeeded")).contains("events");
    assertThat(withoutDefault.topicOf("payment.succeeded")).contains("payments");
    assertThat(withoutDefault.topicOf("refund.succeeded")).as("no topic, no default: not published").isEmpty();
  }

  @Test
  void badValuesAreRefusedWithTheNameOfTheProperty() {
    assertThat(bindFailure("payments.kafka.bootstrap-servers", "localhost"))
        .contains("payments.kafka.bootstrap-servers must be a comma-separated list of host:port, got 'localhost'");
    assertThat(bindFailure("payments.kafka.topics[payment.succeeded]", "pay ments"))
        .contains("payments.kafka.topics[payment.succeeded]: 'pay ments' is not a Kafka topic name");
    assertThat(bindFailure("payments.kafka.topics[payment.suceeded]", "payments"))
        .contains("payments.kafka.topics[payment.suceeded]: 'payment.suceeded' is not an event type");
    assertThat(bindFailure("payments.kafka.default-topic", "x".repeat(250)))
        .contains("payments.kafka.default-topic: '" + "x".repeat(250) + "' is not a Kafka topic name");
    assertThat(bindFailure("payments.kafka.send-timeout", "0s")).contains("payments.kafka.send-timeout");
    assertThat(bindFailure("payments.kafka.send-timeout", "6m")).contains("payments.kafka.send-timeout");
    assertThat(bindFailure("payments.kafka.properties[bootstrap.servers]", SERVERS))
        .contains("set payments.kafka.bootstrap-servers instead");
  }

  @Test
  void aBadTopicNameStopsTheServiceAtStartup() {
    String message = startupFailure("--payments.kafka.topics[payment.succeeded]=payments/eu");

    assertThat(message).contains("payments.kafka.topics[payment.succeeded]: 'payments/eu' is not a Kafka topic name");
  }

  @Test
  void aNegativeSendTimeoutStopsTheServiceAtStartup() {
    String message = startupFailure("--payments.kafka.send-timeout=-5s");

    assertThat(message).contains("payments.kafka.send-timeout must be from 1s to 5m, got PT-5S");
  }

  @Test
  void aProducerSettingThatContradictsExactlyOnceStopsTheServiceAtStartup() {
    String message = startupFailure("--payments.kafka.properties[acks]=1");

    assertThat(message).contains("payments.kafka.properties: acks must be all");
  }

  // ---------------------------------------------------------------- helpers

  private static PaymentsProperties.Kafka bind(Map<String, String> properties) {
    return new Binder(new MapConfigurationPropertySource(properties))
        .bindOrCreate("payments.kafka", PaymentsProperties.Kafka.class);
  }

  /** The messages of the failure to bind Kafka with {@code name=value} (and servers set). */
  private static String bindFailure(String name, String value) {
    Map<String, String> properties = new HashMap<>(Map.of("payments.kafka.bootstrap-servers", SERVERS));
    properties.put(name, value);
    Throwable failure = catchThrowable(() -> bind(properties));
    assertThat(failure).as(name + "=" + value + " is refused").isNotNull();
    return messages(failure);
  }

  /** The messages of the failure to start the service with Kafka on and {@code setting}, on an H2 database. */
  private static String startupFailure(String setting) {
    Throwable failure = catchThrowable(() -> RunningService.start(
        "--spring.datasource.url=jdbc:h2:mem:kafka-settings-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--logging.level.org.springframework=OFF",
        "--payments.kafka.bootstrap-servers=" + SERVERS,
        "--payments.kafka.default-topic=payments",
        setting).close());
    assertThat(failure).as("the service started with " + setting).isNotNull();
    return messages(failure);
  }

  /** Every message along the cause chain: Spring wraps the one that names the property. */
  private static String messages(Throwable failure) {
    List<String> all = new ArrayList<>();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      all.add(String.valueOf(t.getMessage()));
    }
    return String.join("\n", all);
  }
}
