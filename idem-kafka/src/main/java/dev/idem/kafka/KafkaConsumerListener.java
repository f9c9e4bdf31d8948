package dev.idem.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Hooks for meters and logs on a {@link KafkaInboxConsumer}, called on its polling thread. Implementations must be
 * fast and must not throw (what they throw is ignored). Every method does nothing by default. The inbox's own
 * {@link dev.idem.outbox.InboxListener} counts processed and duplicate events as well.
 */
public interface KafkaConsumerListener {
  /**
   * The inbox transaction of {@code records} records of {@code partition} committed; the offset {@code nextOffset} is
   * committed next. A crash between the two redelivers these records, and the inbox skips them.
   *
   * @param duplicates how many of them the inbox had processed before
   */
  default void inboxCommitted(String consumer, TopicPartition partition, long nextOffset, int records,
      int duplicates) {}

  /** Kafka refused or timed out the offset commit (e.g. the partition moved to another consumer in a rebalance). */
  default void offsetCommitFailed(String consumer, TopicPartition partition, long nextOffset, Throwable error) {}

  /**
   * The handler or the database failed on {@code record}; it is tried again after a pause.
   *
   * @param attempts the failures counted for this record, 0 when the database was away (not counted)
   */
  default void failed(String consumer, ConsumerRecord<String, byte[]> record, int attempts, Throwable error) {}

  /**
   * {@code record} went to {@code deadLetterTopic} and its offset was committed past it.
   *
   * @param reason {@code handler_failed}, {@code payload_mismatch}, {@code missing_event_id},
   *     {@code invalid_event_id} or {@code too_large}
   * @param attempts the failures counted for it (0 when it was refused without running the handler)
   */
  default void deadLettered(String consumer, ConsumerRecord<String, byte[]> record, String deadLetterTopic,
      String reason, int attempts) {}

  /**
   * Sending {@code record} to {@code deadLetterTopic} failed (a value too large even for the stripped copy, a missing
   * topic, a broker away): the partition goes back to the record and tries the dead-letter send again after a pause,
   * without running the handler again.
   */
  default void deadLetterFailed(String consumer, ConsumerRecord<String, byte[]> record, String deadLetterTopic,
      Throwable error) {}

  /** Polling Kafka failed; the consumer pauses and polls again. */
  default void pollFailed(String consumer, Throwable error) {}

  /**
   * The consumer stopped for good on {@code error} (an {@link OutOfMemoryError} or another error it cannot go on
   * after); its partitions go to the group's other members. Restart it, or the process.
   */
  default void stopped(String consumer, Throwable error) {}
}
