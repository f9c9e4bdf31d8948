package dev.idem.outbox;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The outbox at a glance.
 *
 * @param counts rows per status
 * @param oldestPendingAge how long the oldest pending event has waited, empty when nothing is pending
 */
public record OutboxStats(Map<OutboxStatus, Long> counts, Optional<Duration> oldestPendingAge) {
  public long count(OutboxStatus status) {
    return counts.getOrDefault(status, 0L);
  }
}
