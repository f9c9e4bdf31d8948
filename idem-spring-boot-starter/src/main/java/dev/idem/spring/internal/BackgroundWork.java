package dev.idem.spring.internal;

import dev.idem.core.Completer;
import dev.idem.core.Idem;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.springframework.context.SmartLifecycle;

/** Starts the completer and the purge of expired records with the application, and stops them with it. */
public final class BackgroundWork implements SmartLifecycle {
  private static final System.Logger LOG = System.getLogger(BackgroundWork.class.getName());

  private final Idem idem;
  private final Clock clock;
  private final boolean completerEnabled;
  private final Duration completerInterval;
  private final int completerBatch;
  private final boolean purgeEnabled;
  private final Duration purgeInterval;
  private final int purgeBatch;
  private Completer completer;
  private ScheduledExecutorService purge;

  public BackgroundWork(Idem idem, Clock clock, boolean completerEnabled, Duration completerInterval,
      int completerBatch, boolean purgeEnabled, Duration purgeInterval, int purgeBatch) {
    this.idem = idem;
    this.clock = clock;
    this.completerEnabled = completerEnabled;
    this.completerInterval = completerInterval;
    this.completerBatch = completerBatch;
    this.purgeEnabled = purgeEnabled;
    this.purgeInterval = purgeInterval;
    this.purgeBatch = purgeBatch;
  }

  @Override
  public synchronized void start() {
    if (completerEnabled && completer == null) {
      completer = idem.completer().interval(completerInterval).batchSize(completerBatch).build().start();
    }
    if (purgeEnabled && purge == null) {
      purge = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "idem-purge-" + idem.name());
        t.setDaemon(true);
        return t;
      });
      purge.scheduleWithFixedDelay(this::purgeOnce, purgeInterval.toMillis(), purgeInterval.toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  /** Deletes expired records batch after batch, at most 100 batches per run. */
  public int purgeOnce() {
    int total = 0;
    try {
      for (int i = 0; i < 100; i++) {
        int deleted = idem.store().purgeExpired(clock.instant(), purgeBatch);
        total += deleted;
        if (deleted < purgeBatch) {
          break;
        }
      }
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "Idem '" + idem.name() + "': purge of expired records failed", e);
    }
    return total;
  }

  /** The running completer, or null when it is disabled or stopped. */
  public synchronized Completer completer() {
    return completer;
  }

  @Override
  public synchronized void stop() {
    if (completer != null) {
      completer.close();
      completer = null;
    }
    if (purge != null) {
      purge.shutdownNow();
      purge = null;
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return completer != null || purge != null;
  }
}
