package dev.idem.test;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Polls until a condition holds or a deadline passes; the deadline is a bound, never the thing tested. */
public final class Eventually {
  private Eventually() {}

  public static <T> T await(String what, Duration deadline, Supplier<T> probe, Predicate<T> done) {
    Instant end = Instant.now().plus(deadline);
    T last = probe.get();
    while (!done.test(last)) {
      if (Instant.now().isAfter(end)) {
        throw new AssertionError("within " + deadline + ": " + what + "; last seen: " + last);
      }
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
      last = probe.get();
    }
    return last;
  }
}
