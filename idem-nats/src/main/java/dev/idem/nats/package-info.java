/**
 * NATS JetStream for events exactly once. {@link dev.idem.nats.NatsJetStreamTransport} is the outbox relay's transport
 * for destinations {@code nats:<subject>}: the event id goes out as {@code Nats-Msg-Id}, so the stream drops re-sends
 * within its duplicate window. {@link dev.idem.nats.NatsInboxConsumer} is a durable pull consumer that processes each
 * message through an {@link dev.idem.outbox.Inbox} and acknowledges it only after the inbox transaction has committed,
 * so a redelivered message has one effect.
 * What the consumer does with each message is decided by {@link dev.idem.outbox.consumer.ConsumerEngine}, as for
 * every broker, and reported to a {@link dev.idem.outbox.consumer.ConsumerListener}; during a database outage a
 * message is held and tried again, so that JetStream counts no delivery against it. A message given up on is
 * published to the consumer's dead-letter subject, if it has one, with Idem's {@code idem-dlt-*} headers, and
 * terminated once JetStream stored the copy.
 *
 * <p>The consumer's effect is the message side's one handler type, an {@link dev.idem.outbox.InboxHandler}: the event
 * carries the JetStream message, {@code event.message(Message.class)}, and for a JDBC inbox the transaction's
 * connection is {@code JdbcTransaction.connectionOf(tx)} (or {@code tx.unwrap(Connection.class)} with
 * {@code java.sql.Connection}).
 *
 * <pre>{@code
 * Connection nats = Nats.connect("nats://127.0.0.1:4222");
 * OutboxRelay relay = OutboxRelay.builder(outbox)
 *     .route("nats", NatsJetStreamTransport.builder(nats).build())
 *     .build();
 * NatsInboxConsumer consumer = NatsInboxConsumer.builder(nats, inbox, "ledger", "PAYMENTS", "payments.>")
 *     .handler((tx, event) -> book(JdbcTransaction.connectionOf(tx), event.message(Message.class).getData()))
 *     .build()
 *     .start();
 * }</pre>
 */
package dev.idem.nats;
