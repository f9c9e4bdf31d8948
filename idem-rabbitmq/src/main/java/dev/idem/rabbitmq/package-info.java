/**
 * RabbitMQ for events exactly once. {@link dev.idem.rabbitmq.RabbitMqTransport} is the outbox relay's transport for
 * destinations {@code rabbitmq:<exchange>/<routingKey>}: publisher confirms, persistent messages, {@code message-id} =
 * event id, unroutable messages retried. {@link dev.idem.rabbitmq.RabbitMqInboxConsumer} consumes a queue through an
 * {@link dev.idem.outbox.Inbox} and acknowledges each message only after the inbox transaction has committed, so a
 * redelivered message has one effect.
 * What the consumer does with each message (ack, requeue, dead-letter, reject; a database outage is no mark against a
 * message) is decided by {@link dev.idem.outbox.consumer.ConsumerEngine}, as for every broker, and reported to a
 * {@link dev.idem.outbox.consumer.ConsumerListener}. With a dead-letter exchange of its own
 * ({@code deadLetterExchange}), a message given up on is republished there by
 * {@link dev.idem.rabbitmq.RabbitMqDeadLetters} with its attempt history in {@code idem-dlt-*} headers, as on Kafka;
 * without one, RabbitMQ dead-letters it through the queue's {@code x-dead-letter-exchange}, with its {@code x-death}
 * header only.
 *
 * <p>The consumer's effect is the message side's one handler type, an {@link dev.idem.outbox.InboxHandler}: the event
 * carries the message, {@code event.message(Delivery.class)}, and for a JDBC inbox the transaction's connection is
 * {@code JdbcTransaction.connectionOf(tx)} (or {@code tx.unwrap(Connection.class)} with {@code java.sql.Connection}).
 *
 * <pre>{@code
 * OutboxRelay relay = OutboxRelay.builder(outbox)
 *     .route("rabbitmq", RabbitMqTransport.builder(connectionFactory).build())
 *     .build();
 * RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(connectionFactory, inbox, "billing", "payments")
 *     .handler((tx, event) -> applyPayment(JdbcTransaction.connectionOf(tx), event.message(Delivery.class).getBody()))
 *     .build()
 *     .start();
 * }</pre>
 */
package dev.idem.rabbitmq;
