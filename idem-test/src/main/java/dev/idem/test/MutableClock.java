package dev.idem.test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock that tests move by hand. Thread-safe: every thread sees the same instant. */
public final class MutableClock extends Clock {
  private final AtomicReference<Instant> now;

  public MutableClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  /** A clock at the current system time, truncated to milliseconds (what stores keep). */
  public static MutableClock startingNow() {
    return new MutableClock(Instant.ofEpochMilli(System.currentTimeMillis()));
  }

  public void advance(Duration d) {
    now.updateAndGet(i -> i.plus(d));
  }

  public void set(Instant instant) {
    now.set(instant);
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
