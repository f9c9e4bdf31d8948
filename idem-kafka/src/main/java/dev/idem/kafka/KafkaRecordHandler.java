package dev.idem.kafka;

import java.sql.Connection;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A consumer's effect for one record, run by {@link KafkaInboxConsumer} in the inbox's transaction, once per event id.
 */
@FunctionalInterface
public interface KafkaRecordHandler {
  /**
   * Applies the record.
   *
   * @param connection the connection of the inbox transaction: write the effect on it, never commit it
   * @param record the record; its key decoded as UTF-8
   * @return a short result kept in the inbox (may be null)
   * @throws Exception to roll the whole transaction back: the record is tried again, and dead-lettered after
   *     {@link KafkaInboxConsumer.Builder#maxAttempts} failures
   */
  String handle(Connection connection, ConsumerRecord<String, byte[]> record)
      throws Exception;
}
