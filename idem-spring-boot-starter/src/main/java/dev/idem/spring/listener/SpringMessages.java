package dev.idem.spring.listener;

import org.springframework.messaging.Message;
import org.springframework.messaging.MessageHeaders;

/**
 * The message id and source of a Spring {@code Message<?>} that a Kafka or RabbitMQ container made; loaded only when
 * spring-messaging is present.
 */
final class SpringMessages {
  private static final String KAFKA_TOPIC = "kafka_receivedTopic";
  private static final String KAFKA_PARTITION = "kafka_receivedPartitionId";
  private static final String KAFKA_OFFSET = "kafka_offset";
  private static final String AMQP_MESSAGE_ID = "amqp_messageId";
  private static final String AMQP_QUEUE = "amqp_consumerQueue";

  private SpringMessages() {}

  /**
   * The {@code idem-event-id} header (text or UTF-8 bytes), else {@code amqp_messageId}, else the Kafka record's
   * position when allowed; or null.
   */
  static String id(Object message, boolean offsetId) {
    MessageHeaders headers = ((Message<?>) message).getHeaders();
    Object id = headers.get(KafkaRecords.EVENT_ID_HEADER);
    if (id instanceof byte[] bytes) {
      return KafkaRecords.utf8(bytes);
    }
    if (id != null) {
      return id.toString();
    }
    Object amqp = headers.get(AMQP_MESSAGE_ID);
    if (amqp != null) {
      return amqp.toString();
    }
    Object topic = headers.get(KAFKA_TOPIC);
    if (offsetId && topic != null && headers.get(KAFKA_PARTITION) instanceof Integer partition
        && headers.get(KAFKA_OFFSET) instanceof Long offset) {
      return KafkaRecords.offsetId(topic.toString(), partition, offset);
    }
    return null;
  }

  static String source(Object message) {
    MessageHeaders headers = ((Message<?>) message).getHeaders();
    Object source = headers.containsKey(KAFKA_TOPIC) ? headers.get(KAFKA_TOPIC) : headers.get(AMQP_QUEUE);
    return source == null ? null : source.toString();
  }

  static Object payload(Object message) {
    return ((Message<?>) message).getPayload();
  }
}
