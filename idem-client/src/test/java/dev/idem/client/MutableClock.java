package dev.idem.client;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that moves only when told to. Thread-safe. */
final class MutableClock extends Clock {
  private volatile long millis;

  MutableClock(Instant start) {
    this.millis = start.toEpochMilli();
  }

  MutableClock() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  synchronized void advance(Duration d) {
    millis += d.toMillis();
  }

  @Override
  public long millis() {
    return millis;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException();
  }
}
