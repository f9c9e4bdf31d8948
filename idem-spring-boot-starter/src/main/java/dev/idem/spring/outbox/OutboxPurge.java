package dev.idem.spring.outbox;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.Outbox;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.springframework.context.SmartLifecycle;

/**
 * Purges delivered and discarded outbox events and old inbox records with the application, on one daemon thread of
 * its own, every {@code idem.outbox.purge.interval}, in bounded batches (each its own short transaction). Runs
 * whatever the relay does: an application that only consumes still needs its inbox purged. Thread-safe.
 */
public final class OutboxPurge implements SmartLifecycle {
  private static final System.Logger LOG = System.getLogger(OutboxPurge.class.getName());
  private static final int MAX_BATCHES_PER_RUN = 100;

  private final Outbox outbox;
  private final Inbox inbox;
  private final Duration interval;
  private final Duration deliveredRetention;
  private final Duration inboxRetention;
  private final int batchSize;
  private ScheduledExecutorService executor;

  /**
   * A purge of {@code outbox} and {@code inbox}; either may be null (nothing to purge there).
   *
   * @param deliveredRetention how long delivered and discarded events are kept
   * @param inboxRetention how long inbox records are kept
   */
  public OutboxPurge(Outbox outbox, Inbox inbox, Duration interval, Duration deliveredRetention,
      Duration inboxRetention, int batchSize) {
    if (interval.isZero() || interval.isNegative() || batchSize < 1) {
      throw new IllegalArgumentException("interval and batchSize must be positive");
    }
    this.outbox = outbox;
    this.inbox = inbox;
    this.interval = interval;
    this.deliveredRetention = deliveredRetention;
    this.inboxRetention = inboxRetention;
    this.batchSize = batchSize;
  }

  @Override
  public synchronized void start() {
    if (executor == null && (outbox != null || inbox != null)) {
      executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "idem-outbox-purge");
        t.setDaemon(true);
        return t;
      });
      executor.scheduleWithFixedDelay(this::purgeOnce, interval.toMillis(), interval.toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Purges now, on the calling thread: batch after batch, at most 100 batches of each table. Failures are logged,
   * not thrown.
   *
   * @return how many events and inbox records were deleted
   */
  public long purgeOnce() {
    long total = 0;
    if (outbox != null) {
      try {
        for (int i = 0; i < MAX_BATCHES_PER_RUN; i++) {
          int n = outbox.purge(deliveredRetention, batchSize);
          total += n;
          if (n < batchSize) {
            break;
          }
        }
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "purge of delivered events in " + outbox + " failed", e);
      }
    }
    if (inbox != null) {
      try {
        for (int i = 0; i < MAX_BATCHES_PER_RUN; i++) {
          int n = inbox.purge(inboxRetention, batchSize);
          total += n;
          if (n < batchSize) {
            break;
          }
        }
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "purge of old records in " + inbox + " failed", e);
      }
    }
    return total;
  }

  @Override
  public synchronized void stop() {
    if (executor != null) {
      executor.shutdownNow();
      try {
        // a purge in progress finishes its statement before the pool closes
        executor.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      executor = null;
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return executor != null;
  }
}
