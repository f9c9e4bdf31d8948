package dev.idem.spring.listener;

import dev.idem.outbox.consumer.Decision;
import java.util.List;
import java.util.Objects;

/**
 * An {@link IdempotentListener} method gave up on a message: its work failed on every one of the attempts allowed,
 * its id came before with another payload ({@code DEAD_LETTER}), or it has no id the inbox can hold ({@code REJECT}).
 * The message must not be delivered again. On RabbitMQ it arrives wrapped in an
 * {@code AmqpRejectAndDontRequeueException}, so that the container rejects the message without requeue (to the queue's
 * dead-letter exchange), unless {@code idem.listeners.rabbit.dead-letter-exchange} is set: the starter's advice then
 * republishes the message there with {@link #history()} in headers and the container acknowledges it; on Kafka the
 * starter's error handler publishes the record to {@code <topic>.dlt} at once with {@link #history()} in headers.
 * Immutable.
 */
public class ListenerGaveUpException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String consumer;
  private final String messageId;
  private final transient Decision decision;
  private final List<String> history;
  private final String detail;

  /**
   * The message {@code messageId} of {@code consumer} is given up on.
   *
   * @param messageId the id, or null when the message has none
   * @param history one line per counted failure, oldest first ({@code <instant> <exception>: <message>})
   */
  public ListenerGaveUpException(String consumer, String messageId, Decision decision, List<String> history,
      Throwable cause) {
    this(consumer, messageId, decision, history, cause, null);
  }

  /** As above, with what was wrong with a refused message, for the listeners. */
  ListenerGaveUpException(String consumer, String messageId, Decision decision, List<String> history,
      Throwable cause, String detail) {
    super("consumer '" + consumer + "' gave up on message " + messageId + ": " + decision, cause);
    this.consumer = Objects.requireNonNull(consumer, "consumer");
    this.messageId = messageId;
    this.decision = Objects.requireNonNull(decision, "decision");
    this.history = List.copyOf(history);
    this.detail = detail;
  }

  /** The inbox's consumer name of the method. */
  public String consumer() {
    return consumer;
  }

  /** The message's id, or null when it has none. */
  public String messageId() {
    return messageId;
  }

  /** {@code DEAD_LETTER} or {@code REJECT}, with the reason and the attempts counted. */
  public Decision decision() {
    return decision;
  }

  /** One line per counted failure, oldest first (at most the last 20). */
  public List<String> history() {
    return history;
  }

  /** What was wrong with a refused message, for the listeners; else the message of this exception. */
  String detail() {
    return detail != null ? detail : getMessage();
  }

  /** The first {@code type} in the cause chain of {@code e}, {@code e} included; null when there is none. */
  static <T extends Throwable> T find(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }
}
