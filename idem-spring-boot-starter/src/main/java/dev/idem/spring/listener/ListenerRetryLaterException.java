package dev.idem.spring.listener;

/**
 * An {@link IdempotentListener} method held a message in the listener thread, waiting out the backoff of failures
 * (the database away, passing conflicts, failed attempts), for as long as {@code idem.listeners.max-hold} allows: it
 * hands the message back to the container for a redelivery. Its failures so far are remembered in memory, so the next
 * delivery goes on counting. On RabbitMQ it reaches the container wrapped in Spring AMQP's
 * {@code ImmediateRequeueAmqpException}, which requeues the message whatever the container's
 * {@code defaultRequeueRejected}; the starter's Kafka error handler seeks back to the record without counting it as a
 * failure.
 */
public class ListenerRetryLaterException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** A hand-back of the message, after the failure {@code cause}. */
  public ListenerRetryLaterException(String message, Throwable cause) {
    super(message, cause);
  }
}
