package dev.idem.core.spi;

import java.time.Duration;

/** Waits. Injected so that tests never sleep in real time. */
@FunctionalInterface
public interface Sleeper {
  /** Sleeps on the calling thread with {@link Thread#sleep}. */
  Sleeper SYSTEM = d -> Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000);

  void sleep(Duration duration) throws InterruptedException;
}
