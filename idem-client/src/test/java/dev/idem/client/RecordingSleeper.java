package dev.idem.client;

import dev.idem.retry.spi.Sleeper;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records each delay and advances the fake clock by it instead of sleeping. */
final class RecordingSleeper implements Sleeper {
  final List<Duration> delays = new CopyOnWriteArrayList<>();
  private final MutableClock clock;

  RecordingSleeper(MutableClock clock) {
    this.clock = clock;
  }

  @Override
  public void sleep(Duration delay) {
    delays.add(delay);
    clock.advance(delay);
  }
}
