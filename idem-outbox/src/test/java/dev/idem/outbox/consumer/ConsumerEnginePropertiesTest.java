package dev.idem.outbox.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Properties of the decision rule over every failure, history and setting. */
class ConsumerEnginePropertiesTest {
  private static final List<Reason> FAILURES = List.of(Reason.PAYLOAD_MISMATCH, Reason.HANDLER_FAILED,
      Reason.CONTENTION, Reason.DATABASE_DOWN, Reason.MISSING_ID, Reason.INVALID_ID, Reason.TOO_LARGE);

  @Provide
  Arbitrary<Reason> failures() {
    return Arbitraries.of(FAILURES);
  }

  @Provide
  Arbitrary<History> histories() {
    return Arbitraries.integers().between(0, 200).tuple3().map(t -> new History(t.get1(), t.get2(), t.get3()));
  }

  @Provide
  Arbitrary<ConsumerEngine> engines() {
    Arbitrary<Integer> attempts = Arbitraries.oneOf(Arbitraries.just(ConsumerEngine.UNLIMITED),
        Arbitraries.integers().between(1, 50));
    Arbitrary<Long> initial = Arbitraries.longs().between(0, 5_000);
    Arbitrary<Long> extra = Arbitraries.longs().between(0, 60_000);
    Arbitrary<Integer> contention = Arbitraries.integers().between(0, 30);
    return Combinators.combine(attempts, initial, extra, contention).as((a, i, x, c) ->
        ConsumerEngine.builder().maxAttempts(a).backoff(Duration.ofMillis(i), Duration.ofMillis(i + x))
            .maxUncountedContention(c).build());
  }

  @Property(tries = 2_000)
  void anOutageNeverCountsNeverGivesUpAndPausesWithinTheBackoff(@ForAll("engines") ConsumerEngine engine,
      @ForAll("histories") History before) {
    Decision d = engine.decide(Reason.DATABASE_DOWN, before);

    assertThat(d.action()).isEqualTo(Action.PAUSE);
    assertThat(d.counted()).isFalse();
    assertThat(d.attempts()).isEqualTo(before.failures());
    assertThat(before.next(d).failures()).isEqualTo(before.failures());
    assertThat(before.next(d).outages()).isEqualTo(before.outages() + 1);
    assertThat(d.after()).isBetween(engine.initialBackoff(), engine.maxBackoff());
  }

  @Property(tries = 2_000)
  void everyDecisionIsWellFormed(@ForAll("engines") ConsumerEngine engine, @ForAll("failures") Reason failure,
      @ForAll("histories") History before) {
    Decision d = engine.decide(failure, before);

    assertThat(d.after()).isLessThanOrEqualTo(engine.maxBackoff());
    if (d.triesAgain()) {
      assertThat(d.after()).isGreaterThanOrEqualTo(engine.initialBackoff());
    } else {
      assertThat(d.after()).isZero();
    }
    if (failure.isRefusal()) {
      assertThat(d).isEqualTo(engine.refused(failure));
    }
    if (d.action() == Action.DEAD_LETTER) {
      assertThat(d.counted()).isTrue();
      assertThat(d.after()).isZero();
    }
    if (d.counted()) {
      assertThat(d.attempts()).isEqualTo(Math.min(Integer.MAX_VALUE, before.failures() + 1));
    }
    if (d.action() == Action.RETRY && !d.counted()) {
      assertThat(d.reason()).isEqualTo(Reason.CONTENTION);
      assertThat(before.contentions()).isLessThan(engine.maxUncountedContention());
    }
  }

  @Property(tries = 1_000)
  void aMessageIsGivenUpOnExactlyWhenItsCountedFailuresReachMaxAttempts(
      @ForAll("engines") ConsumerEngine engine,
      @ForAll @Size(min = 1, max = 120) List<@IntRange(min = 0, max = 2) Integer> steps) {
    History h = History.NONE;
    int counted = 0;
    for (int step : steps) {
      Reason failure = step == 0 ? Reason.HANDLER_FAILED : step == 1 ? Reason.CONTENTION : Reason.DATABASE_DOWN;
      Decision d = engine.decide(failure, h);
      if (d.counted()) {
        counted++;
      }
      if (d.action() == Action.DEAD_LETTER) {
        assertThat(counted).isEqualTo(engine.maxAttempts());
        return;
      }
      assertThat(d.triesAgain()).isTrue();
      h = h.next(d);
      assertThat(h.failures()).isEqualTo(counted);
    }
    assertThat(engine.maxAttempts() == ConsumerEngine.UNLIMITED || counted < engine.maxAttempts()).isTrue();
  }

  @Property(tries = 1_000)
  void theBackoffNeverShrinksAndStaysWithinItsBounds(@ForAll("engines") ConsumerEngine engine,
      @ForAll @IntRange(min = 1, max = 100) int n) {
    Duration now = engine.backoff(n);

    assertThat(engine.backoff(n + 1)).isGreaterThanOrEqualTo(now);
    assertThat(now).isBetween(engine.initialBackoff(), engine.maxBackoff());
  }
}
