package dev.idem.examples.payments.outbox;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxRelay;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the relay with the application, after the web server (so the provider's webhooks find this service's
 * port), and stops it first on shutdown; purges delivered and discarded events and old inbox records on a timer.
 * Mirrors the starter's background work for Idem's completer and purge. A relay starts once: a context restarted
 * after {@link #stop()} does not send again until the application restarts.
 */
public final class OutboxWork implements SmartLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(OutboxWork.class);
  private static final int PURGE_BATCH = 500;

  private final OutboxRelay relay;
  private final Outbox outbox;
  private final Inbox inbox;
  private final boolean enabled;
  private final Duration retention;
  private final Duration inboxRetention;
  private final Duration purgeInterval;
  private boolean relayStarted;
  private ScheduledExecutorService purge;

  public OutboxWork(OutboxRelay relay, Outbox outbox, Inbox inbox, boolean enabled, Duration retention,
      Duration inboxRetention, Duration purgeInterval) {
    this.relay = relay;
    this.outbox = outbox;
    this.inbox = inbox;
    this.enabled = enabled;
    this.retention = retention;
    this.inboxRetention = inboxRetention;
    this.purgeInterval = purgeInterval;
  }

  @Override
  public synchronized void start() {
    if (!enabled) {
      LOG.info("outbox relay {} is disabled (payments.outbox.enabled=false): events wait in {}", relay.name(),
          outbox.store().name());
      return;
    }
    if (!relayStarted) {
      relay.start();
      relayStarted = true;
      LOG.info("outbox relay started: {}", relay);
    }
    if (purge == null) {
      purge = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "payments-outbox-purge");
        t.setDaemon(true);
        return t;
      });
      purge.scheduleWithFixedDelay(this::purgeOnce, purgeInterval.toMillis(), purgeInterval.toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  /** Deletes finished events older than the retention and inbox records older than theirs; answers the counts. */
  public long[] purgeOnce() {
    long events = 0;
    long received = 0;
    try {
      events = outbox.purgeAll(retention, PURGE_BATCH);
      for (int i = 0; i < 100; i++) {
        int n = inbox.purge(inboxRetention, PURGE_BATCH);
        received += n;
        if (n < PURGE_BATCH) {
          break;
        }
      }
      if (events > 0 || received > 0) {
        LOG.info("purged {} finished outbox events and {} inbox records", events, received);
      }
    } catch (RuntimeException e) {
      LOG.warn("purging the outbox or the inbox failed; the next run tries again: {}", e.toString());
    }
    return new long[] {events, received};
  }

  @Override
  public synchronized void stop() {
    if (purge != null) {
      purge.shutdownNow();
      try {
        // a purge in progress finishes its statement before the pool closes
        purge.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      purge = null;
    }
    if (relayStarted && relay.isRunning()) {
      relay.close();
      LOG.info("outbox relay {} stopped", relay.name());
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return purge != null || relayStarted && relay.isRunning();
  }
}
