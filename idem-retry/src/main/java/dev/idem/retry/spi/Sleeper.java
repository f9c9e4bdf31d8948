package dev.idem.retry.spi;

import java.time.Duration;

/**
 * Waits between synchronous attempts. The default is {@link Thread#sleep(long, int)}; tests inject one that records
 * the delay and advances a fake clock, so no test sleeps in real time. Implementations must be thread-safe when the
 * {@link dev.idem.retry.Retry} is shared.
 */
@FunctionalInterface
public interface Sleeper {
  /** The default: sleep the current thread. */
  Sleeper THREAD_SLEEP = delay -> Thread.sleep(delay.toMillis(), (int) (delay.toNanos() % 1_000_000L));

  /** Waits {@code delay}. */
  void sleep(Duration delay) throws InterruptedException;
}
