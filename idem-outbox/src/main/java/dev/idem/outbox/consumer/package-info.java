/**
 * What an inbox consumer does with a broker message, decided once for every broker: {@link
 * dev.idem.outbox.consumer.ConsumerEngine} maps the inbox's outcome, or the failure it threw, and the message's
 * {@link dev.idem.outbox.consumer.History} to a {@link dev.idem.outbox.consumer.Decision} ({@link
 * dev.idem.outbox.consumer.Action#ACK}, {@code RETRY}, {@code PAUSE} when the database is away, {@code REJECT},
 * {@code DEAD_LETTER}); {@link dev.idem.outbox.consumer.ConsumerListener} hears of what the consumers did. Pure Java
 * over idem-core and the inbox's types: the RabbitMQ, NATS and Kafka consumers carry the decisions out (the first two
 * through {@link dev.idem.outbox.consumer.MessageProcessor}), their builders checked by
 * {@link dev.idem.outbox.consumer.ConsumerOptions}.
 */
package dev.idem.outbox.consumer;
