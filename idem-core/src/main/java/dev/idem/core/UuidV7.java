package dev.idem.core;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.Objects;
import java.util.UUID;
import java.util.random.RandomGenerator;

/**
 * A UUID version 7 generator (RFC 9562): 48 bits of Unix milliseconds, then 74 bits that are random for the first
 * UUID of a millisecond and counted up from there (RFC 9562 section 6.2, method 2, with a random increment), so
 * that UUIDs from one generator are strictly increasing even within a millisecond or when the clock steps back.
 * Thread-safe.
 */
public final class UuidV7 {
  private static final long RAND_B_MASK = (1L << 62) - 1;
  private static final UuidV7 DEFAULT = new UuidV7(Clock.systemUTC(), new SecureRandom());

  private final Clock clock;
  private final RandomGenerator random;
  private long lastMillis = -1;
  private long randA;
  private long randB;

  public UuidV7(Clock clock, RandomGenerator random) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.random = Objects.requireNonNull(random, "random");
  }

  /** A new UUIDv7 from the shared default generator (system clock, {@link SecureRandom}). */
  public static UUID next() {
    return DEFAULT.generate();
  }

  /** A new UUIDv7 from this generator. */
  public UUID generate() {
    long millis;
    long a;
    long b;
    synchronized (this) {
      long now = clock.millis();
      if (now > lastMillis) {
        lastMillis = now;
        randA = random.nextInt(1 << 12);
        randB = random.nextLong() & RAND_B_MASK;
      } else {
        // same millisecond, or the clock stepped back: count up from the last value
        randB += 1 + (random.nextInt() & 0x7fffffffL);
        if (randB > RAND_B_MASK) {
          randB &= RAND_B_MASK;
          randA++;
          if (randA >= (1 << 12)) {
            randA = 0;
            lastMillis++;
          }
        }
      }
      millis = lastMillis;
      a = randA;
      b = randB;
    }
    long msb = (millis << 16) | (0x7L << 12) | a;
    long lsb = (0b10L << 62) | b;
    return new UUID(msb, lsb);
  }

  /** The Unix milliseconds a UUIDv7 carries. */
  public static long timestampMillis(UUID uuid) {
    if (uuid.version() != 7) {
      throw new IllegalArgumentException("not a version 7 UUID: " + uuid);
    }
    return uuid.getMostSignificantBits() >>> 16;
  }
}
