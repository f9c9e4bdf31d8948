package dev.idem.outbox.spi;

import dev.idem.outbox.OutboxMessage;
import java.util.Objects;

/**
 * An event a relay holds under a lease.
 *
 * @param seq the store's position of the event: the delivery order, and how the store finds it again
 * @param message what the transport sends; its {@code attempt} is {@code attempts + 1}
 * @param attempts the attempts made before this one, over the event's whole life
 * @param attemptBase {@code attempts} when an operator last replayed the event (0 if never): the retry policy counts
 *     from there
 */
public record ClaimedEvent(long seq, OutboxMessage message, int attempts, int attemptBase) {
  public ClaimedEvent {
    Objects.requireNonNull(message, "message");
  }
}
