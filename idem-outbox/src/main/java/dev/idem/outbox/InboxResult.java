package dev.idem.outbox;

import java.time.Instant;
import java.util.Optional;

/**
 * What {@link Inbox#process} did with an event.
 *
 * @param duplicate true when the event had been processed already and the handler did not run
 * @param result the handler's result: this run's, or the one kept by the first run for a duplicate; may be null
 * @param firstReceivedAt when the event was first received
 */
public record InboxResult(boolean duplicate, String result, Instant firstReceivedAt) {
  public Optional<String> resultText() {
    return Optional.ofNullable(result);
  }
}
