package dev.idem.outbox.spi;

import dev.idem.outbox.OutboxEvent;
import java.util.Objects;

/**
 * An event on its way into an {@link OutboxStore}.
 *
 * @param event the event, already checked by the outbox (payload size and JSON)
 * @param ordered whether it is delivered in order per aggregate (its type is one of the outbox's ordered types)
 */
public record PendingEvent(OutboxEvent event, boolean ordered) {
  public PendingEvent {
    Objects.requireNonNull(event, "event");
  }
}
