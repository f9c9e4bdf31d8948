package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class UuidV7Test {

  /** A clock that returns the millisecond a test sets. */
  private static final class StepClock extends Clock {
    final AtomicLong millis = new AtomicLong(1_763_769_600_000L);

    @Override
    public long millis() {
      return millis.get();
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }

  @Test
  void carriesVersion7VariantAndTheClocksMilliseconds() {
    StepClock clock = new StepClock();
    UuidV7 generator = new UuidV7(clock, new SplittableRandom(1));

    UUID uuid = generator.generate();

    assertThat(uuid.version()).isEqualTo(7);
    assertThat(uuid.variant()).isEqualTo(2);
    assertThat(UuidV7.timestampMillis(uuid)).isEqualTo(clock.millis());
  }

  @Test
  void isStrictlyIncreasingWithinOneMillisecondAndWhenTheClockStepsBack() {
    StepClock clock = new StepClock();
    UuidV7 generator = new UuidV7(clock, new SplittableRandom(7));
    UUID previous = generator.generate();

    for (int i = 0; i < 100_000; i++) {
      if (i == 50_000) {
        clock.millis.addAndGet(-5_000);
      }
      UUID next = generator.generate();

      assertThat(compareUnsigned(next, previous)).as("uuid %d", i).isPositive();
      assertThat(next.version()).isEqualTo(7);
      previous = next;
    }
  }

  @Test
  void concurrentCallersGetDistinctValues() throws Exception {
    UuidV7 generator = new UuidV7(Clock.systemUTC(), new SplittableRandom(3));
    Set<UUID> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    List<Thread> threads = new java.util.ArrayList<>();
    for (int t = 0; t < 4; t++) {
      threads.add(new Thread(() -> {
        for (int i = 0; i < 25_000; i++) {
          seen.add(generator.generate());
        }
      }));
    }

    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join();
    }

    assertThat(seen).hasSize(100_000);
  }

  @Test
  void defaultGeneratorIsUsableAndRejectsOtherVersionsWhenReadingTheTime() {
    Set<UUID> ids = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      ids.add(UuidV7.next());
    }

    assertThat(ids).hasSize(1000);
    assertThatThrownBy(() -> UuidV7.timestampMillis(UUID.randomUUID()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a version 7 UUID");
  }

  private static int compareUnsigned(UUID a, UUID b) {
    int msb = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
    return msb != 0 ? msb : Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits());
  }
}
