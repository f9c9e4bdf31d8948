/**
 * RabbitMQ for events exactly once. {@link dev.idem.rabbitmq.RabbitMqTransport} is the outbox relay's transport for
 * destinations {@code rabbitmq:<exchange>/<routingKey>}: publisher confirms, persistent messages, {@code message-id} =
 * event id, unroutable messages retried. {@link dev.idem.rabbitmq.RabbitMqInboxConsumer} consumes a queue through an
 * {@link dev.idem.outbox.Inbox} and acknowledges each message only after the inbox transaction has committed, so a
 * redelivered message has one effect.
 * What the consumer does with each message (ack, requeue, dead-letter, reject; a database outage is no mark against a
 * message) is decided by {@link dev.idem.outbox.consumer.ConsumerEngine}, as for every broker, and reported to a
 * {@link dev.idem.outbox.consumer.ConsumerListener}.
 *
 * <pre>{@code
 * OutboxRelay relay = OutboxRelay.builder(outbox)
 *     .route("rabbitmq", RabbitMqTransport.builder(connectionFactory).build())
 *     .build();
 * RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(connectionFactory, inbox, "billing", "payments")
 *     .handler((connection, delivery) -> applyPayment(connection, delivery.getBody()))
 *     .build()
 *     .start();
 * }</pre>
 */
package dev.idem.rabbitmq;
