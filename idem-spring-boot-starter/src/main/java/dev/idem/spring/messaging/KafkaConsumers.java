package dev.idem.spring.messaging;

import static dev.idem.spring.messaging.Options.checked;
import static dev.idem.spring.messaging.Options.set;

import dev.idem.kafka.KafkaInboxConsumer;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** Builds the Kafka consumers of {@code idem.consumers.*}; loaded only when idem-kafka is present. */
final class KafkaConsumers {
  private KafkaConsumers() {}

  /** Checks the consumer's settings by building it once, and returns what builds and starts it. */
  static Supplier<AutoCloseable> starter(String name, IdemConsumersProperties properties, Inbox inbox,
      InboxHandler handler, ConsumerListener listener) {
    String prefix = IdemConsumersProperties.PREFIX + "." + name + ".kafka";
    IdemConsumersProperties.Kafka k = properties.getConsumers().get(name).getKafka();
    IdemConsumersProperties.KafkaConnection cluster = properties.getKafka();
    Map<String, Object> config = new LinkedHashMap<>(cluster.getProperties());
    if (cluster.getBootstrapServers() != null && !cluster.getBootstrapServers().isBlank()) {
      config.put("bootstrap.servers", cluster.getBootstrapServers());
    }
    config.put("group.id", name);
    config.putAll(k.getProperties());
    if (k.getGroupId() != null) {
      config.put("group.id", k.getGroupId());
    }
    if (!config.containsKey("bootstrap.servers")) {
      throw new IllegalStateException(prefix + ".topic is set but Kafka is not: set " + IdemConsumersProperties.PREFIX
          + ".kafka.bootstrap-servers");
    }
    Supplier<KafkaInboxConsumer> build = () -> {
      KafkaInboxConsumer.Builder b = checked(prefix + ".topic",
          () -> KafkaInboxConsumer.builder(config, inbox, List.of(k.getTopic())));
      b.name(name);
      set(prefix + ".dead-letter-topic", k.getDeadLetterTopic(), t -> b.deadLetterTopic(topic -> t));
      set(prefix + ".batch-size", k.getBatchSize(), b::batchSize);
      set(prefix + ".max-attempts", k.getMaxAttempts(), b::maxAttempts);
      set(prefix + ".max-payload-bytes", k.getMaxPayloadBytes(), b::maxPayloadBytes);
      set(prefix + ".failure-pause", k.getFailurePause(), b::failurePause);
      set(prefix + ".poll-timeout", k.getPollTimeout(), b::pollTimeout);
      set(prefix + ".send-timeout", k.getSendTimeout(), b::sendTimeout);
      set(prefix + ".close-timeout", k.getCloseTimeout(), b::closeTimeout);
      set(prefix + ".first-delivery-order", k.getFirstDeliveryOrder(), b::firstDeliveryOrder);
      return checked(prefix + ".properties", () -> b.handler(handler).listener(listener).build());
    };
    build.get();
    return () -> checked(prefix + ".topic", () -> build.get().start());
  }
}
