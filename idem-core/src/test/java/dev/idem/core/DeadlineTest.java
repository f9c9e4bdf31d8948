package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DeadlineTest {
  private final AtomicLong now = new AtomicLong(Long.MAX_VALUE - 1_000_000_000L); // wraps around during the tests
  private final LongSupplier fake = now::get;

  @AfterEach
  void noDeadlineLeaks() {
    assertThat(Deadline.current()).isEmpty();
  }

  private void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  @Test
  void remainingShrinksWithTheSourceAndExpiresAtZero() {
    Deadline d = Deadline.after(Duration.ofMillis(500), fake);

    assertThat(d.remaining()).isEqualTo(Duration.ofMillis(500));
    assertThat(d.isExpired()).isFalse();
    advance(Duration.ofMillis(499));
    assertThat(d.remainingMillis()).isEqualTo(1);
    advance(Duration.ofNanos(999_999));
    assertThat(d.remainingMillis()).isZero();
    assertThat(d.isExpired()).isFalse();
    advance(Duration.ofNanos(1));
    assertThat(d.isExpired()).isTrue();
    advance(Duration.ofSeconds(2));
    assertThat(d.remaining()).isEqualTo(Duration.ofMillis(-2000));
    assertThat(d.remainingMillis()).isEqualTo(-2000);
  }

  @Test
  void zeroOrNegativeBudgetIsExpiredAtOnce() {
    assertThat(Deadline.after(Duration.ZERO, fake).isExpired()).isTrue();
    assertThat(Deadline.after(Duration.ofMillis(-5), fake).isExpired()).isTrue();
  }

  @Test
  void hugeBudgetsAreCappedWithoutOverflow() {
    Deadline far = Deadline.after(Duration.ofSeconds(Long.MAX_VALUE), fake);
    Deadline past = Deadline.after(Duration.ofSeconds(Long.MIN_VALUE), fake);

    assertThat(far.isExpired()).isFalse();
    assertThat(far.remaining()).isGreaterThan(Duration.ofDays(365L * 70));
    assertThat(past.isExpired()).isTrue();
    assertThat(past.min(far)).isSameAs(past);
  }

  @Test
  void minIsTheEarlierAcrossWrapAround() {
    Deadline early = Deadline.after(Duration.ofMillis(100), fake);
    Deadline late = Deadline.after(Duration.ofSeconds(5), fake); // past Long.MAX_VALUE: the source wraps

    assertThat(early.min(late)).isSameAs(early);
    assertThat(late.min(early)).isSameAs(early);
    assertThat(early.compareTo(late)).isNegative();
  }

  @Test
  void deadlinesOnDifferentSourcesAreNotCompared() {
    Deadline fakeOne = Deadline.after(Duration.ofMillis(100), fake);
    Deadline real = Deadline.after(Duration.ofMillis(100));

    assertThatThrownBy(() -> fakeOne.min(real)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("different nano sources");
  }

  @Test
  void enterMakesTheDeadlineCurrentAndCloseRestoresNone() {
    Deadline d = Deadline.after(Duration.ofSeconds(1), fake);

    assertThat(Deadline.current()).isEmpty();
    try (Deadline.Binding b = d.enter()) {
      assertThat(Deadline.current()).containsSame(d);
      assertThat(b.deadline()).isSameAs(d);
    }
    assertThat(Deadline.current()).isEmpty();
  }

  @Test
  void nestingKeepsTheSmallerAndRestoresTheOuter() {
    Deadline outer = Deadline.after(Duration.ofSeconds(1), fake);
    Deadline longer = Deadline.after(Duration.ofSeconds(10), fake);
    Deadline shorter = Deadline.after(Duration.ofMillis(200), fake);

    try (Deadline.Binding o = outer.enter()) {
      try (Deadline.Binding inner = longer.enter()) {
        assertThat(Deadline.current()).containsSame(outer);
        assertThat(inner.deadline()).isSameAs(outer);
        try (Deadline.Binding innermost = shorter.enter()) {
          assertThat(Deadline.current()).containsSame(shorter);
        }
        assertThat(Deadline.current()).containsSame(outer);
      }
      assertThat(Deadline.current()).containsSame(outer);
    }
    assertThat(Deadline.current()).isEmpty();
  }

  @Test
  void closingTwiceIsHarmless() {
    Deadline outer = Deadline.after(Duration.ofSeconds(1), fake);
    Deadline inner = Deadline.after(Duration.ofMillis(10), fake);

    try (Deadline.Binding o = outer.enter()) {
      Deadline.Binding i = inner.enter();
      i.close();
      i.close();
      assertThat(Deadline.current()).containsSame(outer);
    }
  }

  @Test
  void theCurrentDeadlineIsConfinedToItsThread() throws Exception {
    Deadline d = Deadline.after(Duration.ofSeconds(1), fake);

    Optional<Deadline> elsewhere;
    Deadline.Binding b = d.enter();
    try {
      elsewhere = CompletableFuture.supplyAsync(Deadline::current).get();
      CompletableFuture<Void> closeElsewhere = CompletableFuture.runAsync(b::close);
      assertThatThrownBy(closeElsewhere::join).hasCauseInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed on the thread that entered it");
      assertThat(Deadline.current()).containsSame(d);
    } finally {
      b.close();
    }

    assertThat(elsewhere).isEmpty();
  }
}
