package dev.idem.outbox.consumer;

/** What a consumer does with a message, as a {@link Decision} says. */
public enum Action {
  /** The inbox committed it (processed, or a duplicate): acknowledge it, or commit the offset past it. */
  ACK,
  /**
   * Try it again after {@link Decision#after()}: RabbitMQ requeues it, NATS naks it with that delay, Kafka goes back to
   * it. {@link Decision#counted()} says whether the failure counted against the message; one that did not (a passing
   * conflict) RabbitMQ and NATS hold in hand and try again, as for {@link #PAUSE}.
   */
  RETRY,
  /**
   * The database is away: stop consuming for {@link Decision#after()}, then try the same message again, counting the
   * failure against no message (see {@link ConsumerEngine}).
   */
  PAUSE,
  /**
   * The message cannot be taken (no id, an id the inbox cannot hold, too large): refuse it without ever retrying it.
   * RabbitMQ rejects it without requeue, NATS terminates it, Kafka sends it to the dead-letter topic.
   */
  REJECT,
  /**
   * Give up on the message: its handler failed {@link ConsumerEngine#maxAttempts()} times, or its id came with
   * another payload. RabbitMQ nacks it without requeue (to the queue's dead-letter exchange), NATS terminates it,
   * Kafka sends it to the dead-letter topic.
   */
  DEAD_LETTER
}
