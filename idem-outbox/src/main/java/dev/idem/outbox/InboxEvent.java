package dev.idem.outbox;

import java.util.Arrays;
import java.util.Objects;

/**
 * One event of a batch for {@link Inbox#processBatch}: its id, where it came from and its exact payload bytes. Checked
 * when made, as {@link Inbox#process} checks its arguments. Immutable apart from the payload array, which is not copied
 * (a broker batch can be large): the inbox hashes it when the batch runs, so do not change it after making the event.
 * Safe to share between threads once made.
 *
 * @param eventId the event's id, unique per producer: 1 to 255 characters, no control characters
 * @param source where the event came from (a topic, a webhook sender), kept for operators; may be null
 * @param payload the exact bytes received, compared by SHA-256 with those of an earlier delivery
 * @param message the broker's own message it came in (a RabbitMQ {@code Delivery}, a NATS {@code Message}, a Kafka
 *     {@code ConsumerRecord}), for handlers that need its headers; null when there is none. Not part of equality.
 */
public record InboxEvent(String eventId, String source, byte[] payload, Object message) {
  public InboxEvent {
    Limits.text("eventId", eventId, Limits.NAME);
    if (source != null) {
      Limits.text("source", source, Limits.NAME);
    }
    Objects.requireNonNull(payload, "payload");
  }

  /** An event that came in no broker message. */
  public InboxEvent(String eventId, String source, byte[] payload) {
    this(eventId, source, payload, null);
  }

  /** An event with no source. */
  public static InboxEvent of(String eventId, byte[] payload) {
    return new InboxEvent(eventId, null, payload);
  }

  /**
   * The broker's message, as {@code type}.
   *
   * @throws IllegalStateException when the event came in no message of that type
   */
  public <T> T message(Class<T> type) {
    if (!type.isInstance(message)) {
      throw new IllegalStateException("event " + eventId + " came in " + (message == null ? "no broker message"
          : "a " + message.getClass().getName()) + ", not a " + type.getName());
    }
    return type.cast(message);
  }

  /** Equal when the id, the source and the payload bytes are. */
  @Override
  public boolean equals(Object o) {
    return o instanceof InboxEvent e && eventId.equals(e.eventId) && Objects.equals(source, e.source)
        && Arrays.equals(payload, e.payload);
  }

  @Override
  public int hashCode() {
    return Objects.hash(eventId, source, Arrays.hashCode(payload));
  }

  @Override
  public String toString() {
    return "InboxEvent{" + eventId + (source == null ? "" : " from " + source) + ", " + payload.length + " bytes}";
  }
}
