package dev.idem.outbox.spi;

import java.time.Instant;

/** The operator side of an {@link InboxStore}: each method runs in a short transaction of its own. */
public interface InboxAdmin {

  /** Whether {@code consumer} has processed {@code eventId} (committed). */
  boolean contains(String consumer, String eventId);

  /**
   * Deletes up to {@code limit} records received at or before {@code receivedBefore}, without blocking consumers.
   *
   * @return how many were deleted; call again while it returns {@code limit}
   */
  int purge(Instant receivedBefore, int limit);
}
