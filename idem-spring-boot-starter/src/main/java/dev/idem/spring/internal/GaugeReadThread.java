package dev.idem.spring.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one daemon thread on which a bean's gauges read their figures from the database, off the scraping thread
 * ({@link InProgressGauges}, {@code OutboxMetrics}). Each bean owns its own, so that a slow read (waiting for a pool
 * connection, say) holds up no other bean's gauges, and shuts it down when it is closed, so that no thread outlives
 * its application context. The thread starts with the first read and runs with this class's class loader as its
 * context class loader, whichever thread (a scrape's) starts it.
 */
public final class GaugeReadThread {
  private GaugeReadThread() {}

  /** A single-thread executor whose daemon thread is called {@code name}; shut it down to stop the thread. */
  public static ExecutorService executor(String name) {
    ClassLoader loader = GaugeReadThread.class.getClassLoader();
    return new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      t.setContextClassLoader(loader);
      return t;
    });
  }
}
