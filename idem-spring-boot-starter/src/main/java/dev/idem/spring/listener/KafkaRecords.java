package dev.idem.spring.listener;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** The message id, source and body of a Kafka {@code ConsumerRecord}; loaded only when the application has Kafka. */
final class KafkaRecords {
  /** The header Idem's Kafka transport sets to the event id ({@code KafkaTransport.EVENT_ID_HEADER}). */
  static final String EVENT_ID_HEADER = "idem-event-id";

  private KafkaRecords() {}

  /** The {@code idem-event-id} header, or {@code <topic>-<partition>@<offset>} when allowed, or null. */
  static String id(Object message, boolean offsetId) {
    ConsumerRecord<?, ?> record = (ConsumerRecord<?, ?>) message;
    Header header = record.headers().lastHeader(EVENT_ID_HEADER);
    if (header != null && header.value() != null) {
      return utf8(header.value());
    }
    return offsetId ? offsetId(record.topic(), record.partition(), record.offset()) : null;
  }

  /** The id of a record from its position, as {@code KafkaInboxConsumer.OFFSET_ID} makes it. */
  static String offsetId(String topic, int partition, long offset) {
    return topic + '-' + partition + '@' + offset;
  }

  static String source(Object message) {
    return ((ConsumerRecord<?, ?>) message).topic();
  }

  static Object value(Object message) {
    return ((ConsumerRecord<?, ?>) message).value();
  }

  /**
   * The header's bytes as UTF-8.
   *
   * @throws IllegalArgumentException when they are not UTF-8: an id the inbox cannot hold
   */
  static String utf8(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(EVENT_ID_HEADER + " is not UTF-8", e);
    }
  }
}
