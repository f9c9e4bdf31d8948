package dev.idem.outbox.spi;

import dev.idem.outbox.DeliveryResult;
import java.time.Instant;
import java.util.Objects;

/**
 * A failed send, as a relay hands it to {@link OutboxStore#finish}.
 *
 * @param claimed the event
 * @param result the transport's answer: its error goes to the history and becomes the event's last error (one longer
 *     than 1000 characters is kept as its first 999 and an ellipsis); its response code goes to the history
 * @param dead whether the relay gave up on the event
 * @param nextAttempt when to try again (ignored when dead)
 */
public record FailedDelivery(ClaimedEvent claimed, DeliveryResult result, boolean dead, Instant nextAttempt) {
  public FailedDelivery {
    Objects.requireNonNull(claimed, "claimed");
    Objects.requireNonNull(result, "result");
    Objects.requireNonNull(nextAttempt, "nextAttempt");
  }

  /** The error a store keeps: the result's ({@code failed} when it has none), at most 1000 characters. */
  public String error() {
    String error = result.error().orElse("failed");
    return error.length() <= 1000 ? error : error.substring(0, 999) + "…";
  }
}
