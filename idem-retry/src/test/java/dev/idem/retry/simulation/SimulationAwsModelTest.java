package dev.idem.retry.simulation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.LongSummaryStatistics;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The {@link Model#AWS_2015} conventions, and that {@link Model#IDEM} is still the default. */
class SimulationAwsModelTest {
  private static final long BASE = ContentionSimulation.BASE.toNanos();
  private static final long CAP = ContentionSimulation.CAP.toNanos();

  private static ContentionSimulation aws(int clients, int runs, long seed, Strategy strategy) {
    return ContentionSimulation.builder().model(Model.AWS_2015).clients(clients).runs(runs).seed(seed)
        .strategy(strategy).build();
  }

  private static Backoff backoff(Strategy strategy, Model model) {
    return strategy.backoff(model, ContentionSimulation.BASE, ContentionSimulation.CAP);
  }

  @Test
  void theExponentialTermAfterTheNthFailureIsBaseTimesTwoToTheN() {
    Backoff aws = backoff(Strategy.EXPONENTIAL, Model.AWS_2015);
    Backoff idem = backoff(Strategy.EXPONENTIAL, Model.IDEM);
    SplittableRandom random = new SplittableRandom(1);

    assertThat(aws.delayNanos(1, 0, random)).isEqualTo(2 * BASE);
    assertThat(idem.delayNanos(1, 0, random)).isEqualTo(BASE);
    for (int n = 1; n <= 40; n++) {
      long expected = n < 20 ? Math.min(CAP, BASE << n) : CAP;
      assertThat(aws.delayNanos(n, 0, random)).as("failure %d", n).isEqualTo(expected);
    }
  }

  @Test
  void theFirstSleepWithoutJitterInARunIsTwiceTheBase() {
    ContentionSimulation simulation = aws(50, 3, 17, Strategy.EXPONENTIAL);
    TreeSet<Long> sleeps = new TreeSet<>();

    for (int run = 0; run < 3; run++) {
      simulation.runOnce(run, sleeps::add);
    }

    assertThat(sleeps.first()).isEqualTo(2 * BASE);
    assertThat(sleeps).allSatisfy(s -> assertThat(s == CAP || Long.bitCount(s / BASE) == 1 && s % BASE == 0)
        .as("%d ns is base * 2^n or the cap", s).isTrue());
  }

  @Test
  void theJitteredExponentialsDrawFromTheDoubledTerm() {
    Backoff full = backoff(Strategy.FULL, Model.AWS_2015);
    Backoff equal = backoff(Strategy.EQUAL, Model.AWS_2015);
    SplittableRandom random = new SplittableRandom(2);
    LongSummaryStatistics fullFirst = new LongSummaryStatistics();
    LongSummaryStatistics equalFirst = new LongSummaryStatistics();

    for (int i = 0; i < 10_000; i++) {
      fullFirst.accept(full.delayNanos(1, 0, random));
      equalFirst.accept(equal.delayNanos(1, 0, random));
    }

    assertThat(full).isEqualTo(Backoff.exponential(Duration.ofNanos(2 * BASE), ContentionSimulation.CAP, Jitter.FULL));
    assertThat(fullFirst.getMin()).isBetween(0L, BASE / 100);
    assertThat(fullFirst.getMax()).isBetween(2 * BASE - BASE / 100, 2 * BASE);
    assertThat(equalFirst.getMin()).isBetween(BASE, BASE + BASE / 100);
    assertThat(equalFirst.getMax()).isBetween(2 * BASE - BASE / 100, 2 * BASE);
  }

  @Test
  void decorrelatedJitterStartsFromSleepEqualToBase() {
    Backoff decorrelated = backoff(Strategy.DECORRELATED, Model.AWS_2015);
    SplittableRandom random = new SplittableRandom(3);
    LongSummaryStatistics first = new LongSummaryStatistics();

    for (int i = 0; i < 10_000; i++) {
      first.accept(decorrelated.delayNanos(1, 0, random));
    }

    // uniform(base, 3 * sleep) with sleep = base before the first failure
    assertThat(first.getMin()).isBetween(BASE, BASE + BASE / 100);
    assertThat(first.getMax()).isBetween(3 * BASE - BASE / 100, 3 * BASE);
    assertThat(decorrelated).isEqualTo(backoff(Strategy.DECORRELATED, Model.IDEM));
  }

  @Test
  void idemStrategiesKeepIdemsOwnBackoffUnderTheAwsModel() {
    Backoff idemDefault = Backoff.exponential(ContentionSimulation.BASE, ContentionSimulation.CAP, Jitter.FULL);

    assertThat(backoff(Strategy.IDEM, Model.AWS_2015)).isEqualTo(idemDefault);
    assertThat(backoff(Strategy.IDEM_BUDGET, Model.AWS_2015)).isEqualTo(idemDefault);
    assertThat(backoff(Strategy.FULL, Model.AWS_2015)).isNotEqualTo(idemDefault);
  }

  @ParameterizedTest
  @EnumSource(value = Strategy.class, names = {"NONE", "EXPONENTIAL", "FULL", "EQUAL", "DECORRELATED", "IDEM"})
  void writesCountOneWritePerAttemptAndNothingElse(Strategy strategy) {
    ContentionSimulation simulation = aws(60, 8, 23, strategy);
    List<RunOutcome> outcomes = new ArrayList<>();
    long[] conflicts = new long[8];

    for (int run = 0; run < 8; run++) {
      int r = run;
      outcomes.add(simulation.runOnce(run, delay -> conflicts[r]++));
    }
    Result result = simulation.run();

    for (int run = 0; run < 8; run++) {
      RunOutcome o = outcomes.get(run);
      // Without a budget every conflict draws one sleep; every client's last write is applied.
      assertThat(o.writes()).isEqualTo(60 + conflicts[run]);
      assertThat(o.reads()).isEqualTo(o.writes());
      assertThat(o.completedClients()).isEqualTo(60);
    }
    double meanWrites = outcomes.stream().mapToLong(RunOutcome::writes).sum() / 8.0;
    assertThat(result.meanWrites()).isEqualTo(meanWrites);
    assertThat(result.meanCalls()).isEqualTo(2 * meanWrites);
  }

  @Test
  void aCallIsARequestHopAndAReplyHop() {
    ContentionSimulation idem = ContentionSimulation.builder().clients(1).seed(5).strategy(Strategy.FULL).build();
    ContentionSimulation aws = aws(1, 1, 5, Strategy.FULL);

    RunOutcome idemOutcome = idem.runOnce(0, null);
    RunOutcome awsOutcome = aws.runOnce(0, null);

    assertThat(awsOutcome.reads()).isEqualTo(1);
    assertThat(awsOutcome.writes()).isEqualTo(1);
    // The same generator draws the same first two hops; the AWS model adds the two replies.
    assertThat(awsOutcome.completionNanos()).isGreaterThan(idemOutcome.completionNanos());
    // Four hops of |Normal(10 ms, 2 ms)|.
    assertThat(awsOutcome.completionNanos()).isBetween(20_000_000L, 80_000_000L);
  }

  @Test
  void theBudgetWorksUnderTheAwsModelAndEveryClientStillWrites() {
    RunOutcome outcome = aws(100, 1, 5, Strategy.IDEM_BUDGET).runOnce(0, null);

    assertThat(outcome.refusedRetries()).isPositive();
    assertThat(outcome.completedClients()).isEqualTo(100);
  }

  @Test
  void theQualitativeResultsOfThePublishedExperimentHoldAtAHundredClients() {
    Map<Strategy, Result> results = new EnumMap<>(Strategy.class);
    for (Sweep.Row row : Sweep.builder().model(Model.AWS_2015).clients(100, 100, 1).runs(100).seed(42).build().run()) {
      results.put(row.strategy(), row.result());
    }
    Result exponential = results.get(Strategy.EXPONENTIAL);

    // Full and equal jitter cut the writes by more than half; decorrelated by more than 40% (46% in the published
    // simulator too, at 100 clients).
    assertThat(results.get(Strategy.FULL).meanWrites()).isLessThan(exponential.meanWrites() / 2);
    assertThat(results.get(Strategy.EQUAL).meanWrites()).isLessThan(exponential.meanWrites() / 2);
    assertThat(results.get(Strategy.DECORRELATED).meanWrites()).isLessThan(exponential.meanWrites() * 0.6);
    // No-jitter exponential is by far the slowest, and makes more writes than any jittered strategy.
    for (Strategy s : Strategy.values()) {
      if (s != Strategy.EXPONENTIAL) {
        assertThat(results.get(s).meanCompletionMillis()).as(s.id())
            .isLessThan(exponential.meanCompletionMillis() / 5);
      }
      if (s != Strategy.EXPONENTIAL && s != Strategy.NONE) {
        assertThat(results.get(s).meanWrites()).as(s.id()).isLessThan(exponential.meanWrites());
      }
    }
    // Without backoff clients write the most, as in the published chart.
    assertThat(results.get(Strategy.NONE).meanWrites()).isGreaterThan(exponential.meanWrites());
  }

  @ParameterizedTest
  @EnumSource(Strategy.class)
  void theSameOptionsGiveTheSameResultsAndAnotherSeedDoesNot(Strategy strategy) {
    Result first = aws(40, 20, 7, strategy).run();
    Result second = aws(40, 20, 7, strategy).run();
    Result otherSeed = aws(40, 20, 8, strategy).run();

    assertThat(second).isEqualTo(first);
    assertThat(otherSeed.meanCompletionMillis()).isNotEqualTo(first.meanCompletionMillis());
    assertThat(otherSeed.meanWrites()).isNotEqualTo(first.meanWrites());
  }

  @Test
  void aSweepRowIsWhatTheSingleSimulationGivesInTheSameModel() {
    Sweep sweep = Sweep.builder().model(Model.AWS_2015).clients(20, 30, 10).strategies(Strategy.DECORRELATED).runs(4)
        .seed(99).build();

    List<Sweep.Row> rows = sweep.run();

    assertThat(sweep.model()).isEqualTo(Model.AWS_2015);
    assertThat(rows.get(1).result()).isEqualTo(aws(30, 4, 99, Strategy.DECORRELATED).run());
    assertThat(rows.get(1).result()).isNotEqualTo(ContentionSimulation.builder().clients(30).runs(4).seed(99)
        .strategy(Strategy.DECORRELATED).build().run());
  }

  @Test
  void idemIsTheDefaultModel() {
    ContentionSimulation simulation = ContentionSimulation.builder().clients(30).runs(4).seed(9)
        .strategy(Strategy.EQUAL).build();

    assertThat(simulation.model()).isEqualTo(Model.IDEM);
    assertThat(Sweep.builder().build().model()).isEqualTo(Model.IDEM);
    assertThat(simulation.run()).isEqualTo(ContentionSimulation.builder().model(Model.IDEM).clients(30).runs(4)
        .seed(9).strategy(Strategy.EQUAL).build().run());
  }

  @Test
  void modelsAreFoundByTheirIdsAndANullModelIsRefused() {
    assertThat(Model.ofId("idem")).isSameAs(Model.IDEM);
    assertThat(Model.ofId("aws-2015")).isSameAs(Model.AWS_2015);
    assertThat(Model.ids()).isEqualTo("idem,aws-2015");
    assertThatThrownBy(() -> Model.ofId("aws")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown model 'aws'; known models: idem,aws-2015");
    assertThatThrownBy(() -> ContentionSimulation.builder().model(null).strategy(Strategy.FULL).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessage("model must not be null; known models: idem,aws-2015");
    assertThatThrownBy(() -> Sweep.builder().model(null).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessage("model must not be null; known models: idem,aws-2015");
  }
}
