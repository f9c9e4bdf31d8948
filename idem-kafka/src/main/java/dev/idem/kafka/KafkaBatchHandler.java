package dev.idem.kafka;

import java.sql.Connection;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A consumer's effect for the new records of one batch at once (one JDBC batch for all of them, say), run by
 * {@link KafkaInboxConsumer} in the inbox's transaction. Records already processed are not passed in.
 */
@FunctionalInterface
public interface KafkaBatchHandler {
  /**
   * Applies the records.
   *
   * @param connection the connection of the inbox transaction: write the effects on it, never commit it
   * @param records the new records of one partition, in offset order, one per event id
   * @return one result per record to keep in the inbox, in order (elements may be null), or null for none
   * @throws Exception to roll the batch back; the consumer then tries its records one at a time, so that only a
   *     record that fails on its own is retried and, after {@link KafkaInboxConsumer.Builder#maxAttempts} failures,
   *     dead-lettered
   */
  List<String> handle(Connection connection, List<ConsumerRecord<String, byte[]>> records) throws Exception;
}
