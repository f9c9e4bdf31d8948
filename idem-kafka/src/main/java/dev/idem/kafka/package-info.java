/**
 * Kafka for events exactly once. {@link dev.idem.kafka.KafkaTransport} is the outbox relay's transport for destinations
 * {@code kafka:<topic>} (or {@code kafka}, with a topic per event type): an idempotent producer with {@code acks=all},
 * the aggregate id as the record key, the event id in the {@code idem-event-id} header, delivered once the broker has
 * acknowledged. {@link dev.idem.kafka.KafkaInboxConsumer} consumes topics through an
 * {@link dev.idem.outbox.Inbox}: each partition's batch in one database transaction with the handler's effects, the
 * offset committed only after that transaction, poison records to a dead-letter topic.
 * What the consumer does with each record is decided by {@link dev.idem.outbox.consumer.ConsumerEngine}, as for every
 * broker, and reported to a {@link dev.idem.outbox.consumer.ConsumerListener}.
 *
 * <p>The consumer's effect is the message side's one handler type, an {@link dev.idem.outbox.InboxHandler}: the event
 * carries the record ({@code KafkaInboxConsumer.record(event)}, or {@code event.message(ConsumerRecord.class)}), and
 * for a JDBC inbox the transaction's connection is {@code tx.unwrap(Connection.class)}. A handler that takes a
 * batch's new records at once overrides {@link dev.idem.outbox.InboxHandler#handleAll}.
 *
 * <pre>{@code
 * OutboxRelay relay = OutboxRelay.builder(outbox)
 *     .route("kafka", KafkaTransport.builder(Map.of("bootstrap.servers", servers)).build())
 *     .build();
 * KafkaInboxConsumer consumer = KafkaInboxConsumer.builder(
 *         Map.of("bootstrap.servers", servers, "group.id", "billing"), inbox, List.of("payments"))
 *     .handler((tx, event) -> applyPayment(tx.unwrap(Connection.class), KafkaInboxConsumer.record(event).value()))
 *     .build()
 *     .start();
 * }</pre>
 */
package dev.idem.kafka;
