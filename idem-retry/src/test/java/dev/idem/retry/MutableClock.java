package dev.idem.retry;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that moves only when told to. Thread-safe. */
final class MutableClock extends Clock {
  private volatile long nanos;

  MutableClock(Instant start) {
    this.nanos = start.getEpochSecond() * 1_000_000_000L + start.getNano();
  }

  MutableClock() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  synchronized void advance(Duration d) {
    nanos += d.toNanos();
  }

  synchronized void setNanos(long epochNanos) {
    nanos = epochNanos;
  }

  long nanos() {
    return nanos;
  }

  @Override
  public long millis() {
    return Math.floorDiv(nanos, 1_000_000L);
  }

  @Override
  public Instant instant() {
    long n = nanos;
    return Instant.ofEpochSecond(Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
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
