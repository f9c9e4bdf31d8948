package dev.idem.examples.payments.inbox;

import dev.idem.outbox.InboxListener;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the inbox did since the service started: events processed, duplicates dropped, payload mismatches refused.
 * Thread-safe.
 */
public final class InboxCounts implements InboxListener {
  private final AtomicLong processed = new AtomicLong();
  private final AtomicLong duplicates = new AtomicLong();
  private final AtomicLong mismatches = new AtomicLong();

  @Override
  public void processed(String consumer) {
    processed.incrementAndGet();
  }

  @Override
  public void duplicate(String consumer) {
    duplicates.incrementAndGet();
  }

  @Override
  public void payloadMismatch(String consumer, String eventId) {
    mismatches.incrementAndGet();
  }

  /** Handler runs for new events (counted before their transaction commits). */
  public long processed() {
    return processed.get();
  }

  public long duplicates() {
    return duplicates.get();
  }

  public long payloadMismatches() {
    return mismatches.get();
  }
}
