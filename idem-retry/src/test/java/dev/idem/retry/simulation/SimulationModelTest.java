package dev.idem.retry.simulation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.LongSummaryStatistics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class SimulationModelTest {

  private static ContentionSimulation simulation(int clients, int runs, long seed, Strategy strategy) {
    return ContentionSimulation.builder().clients(clients).runs(runs).seed(seed).strategy(strategy).build();
  }

  @ParameterizedTest
  @EnumSource(Strategy.class)
  void theSameSeedGivesIdenticalResults(Strategy strategy) {
    Result first = simulation(40, 20, 7, strategy).run();
    Result second = simulation(40, 20, 7, strategy).run();

    assertThat(second).isEqualTo(first);
  }

  @ParameterizedTest
  @EnumSource(Strategy.class)
  void differentSeedsGiveDifferentResults(Strategy strategy) {
    Result seven = simulation(40, 20, 7, strategy).run();
    Result eight = simulation(40, 20, 8, strategy).run();

    assertThat(eight.meanCompletionMillis()).isNotEqualTo(seven.meanCompletionMillis());
    assertThat(eight.meanCalls()).isNotEqualTo(seven.meanCalls());
  }

  @ParameterizedTest
  @EnumSource(Strategy.class)
  void oneClientReadsOnceAndWritesOnce(Strategy strategy) {
    ContentionSimulation alone = simulation(1, 10, 3, strategy);

    RunOutcome outcome = alone.runOnce(0, null);
    Result result = alone.run();

    assertThat(outcome.reads()).isEqualTo(1);
    assertThat(outcome.writes()).isEqualTo(1);
    assertThat(outcome.completedClients()).isEqualTo(1);
    assertThat(result.meanCalls()).isEqualTo(2.0);
    assertThat(result.meanRefusedRetries()).isZero();
    // Two hops of |Normal(10 ms, 2 ms)|: well inside 0..100 ms for any seed in practice, and never zero.
    assertThat(result.meanCompletionMillis()).isBetween(1.0, 100.0);
  }

  @Test
  void noBackoffMakesMoreCallsThanFullJitterAtAHundredClients() {
    Result none = simulation(100, 50, 42, Strategy.NONE).run();
    Result full = simulation(100, 50, 42, Strategy.FULL).run();

    assertThat(none.meanCalls()).isGreaterThan(full.meanCalls());
  }

  @ParameterizedTest
  @EnumSource(Strategy.class)
  void everyClientWritesExactlyOnceInEveryRun(Strategy strategy) {
    ContentionSimulation simulation = simulation(60, 10, 11, strategy);

    List<RunOutcome> outcomes = new ArrayList<>();
    for (int run = 0; run < 10; run++) {
      outcomes.add(simulation.runOnce(run, null));
    }

    assertThat(outcomes).allSatisfy(o -> {
      assertThat(o.completedClients()).isEqualTo(60);
      // A client writes only after a read; every read is followed by one write.
      assertThat(o.writes()).isEqualTo(o.reads()).isGreaterThanOrEqualTo(60);
      assertThat(o.completionNanos()).isPositive();
    });
  }

  @Test
  void theBudgetRefusesRetriesUnderContentionAndEveryClientStillWrites() {
    ContentionSimulation budgeted = simulation(100, 10, 5, Strategy.IDEM_BUDGET);

    RunOutcome outcome = budgeted.runOnce(0, null);

    assertThat(outcome.refusedRetries()).isPositive();
    assertThat(outcome.completedClients()).isEqualTo(100);
  }

  @Test
  void strategiesWithoutABudgetRefuseNothing() {
    for (Strategy s : Strategy.values()) {
      if (s != Strategy.IDEM_BUDGET) {
        assertThat(simulation(50, 5, 9, s).run().meanRefusedRetries()).as(s.id()).isZero();
      }
    }
  }

  @Test
  void decorrelatedSleepsStayWithinBaseAndCap() {
    ContentionSimulation simulation = simulation(150, 5, 13, Strategy.DECORRELATED);
    LongSummaryStatistics sleeps = new LongSummaryStatistics();

    for (int run = 0; run < 5; run++) {
      simulation.runOnce(run, sleeps);
    }

    assertThat(sleeps.getCount()).isGreaterThan(1_000);
    assertThat(sleeps.getMin()).isGreaterThanOrEqualTo(ContentionSimulation.BASE.toNanos());
    assertThat(sleeps.getMax()).isLessThanOrEqualTo(ContentionSimulation.CAP.toNanos());
  }

  @Test
  void idemIsFullJitterUnderItsOwnName() {
    Result idem = simulation(80, 10, 21, Strategy.IDEM).run();
    Result full = simulation(80, 10, 21, Strategy.FULL).run();

    assertThat(idem).isEqualTo(full);
  }

  @Test
  void theBuilderNamesTheBadParameter() {
    assertThatThrownBy(() -> ContentionSimulation.builder().clients(0).strategy(Strategy.FULL).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessage("clients must be at least 1, was 0");
    assertThatThrownBy(() -> ContentionSimulation.builder().runs(-3).strategy(Strategy.FULL).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessage("runs must be at least 1, was -3");
    assertThatThrownBy(() -> ContentionSimulation.builder().build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("strategy must be set");
  }

  @Test
  void strategiesAreFoundByTheirIds() {
    for (Strategy s : Strategy.values()) {
      assertThat(Strategy.ofId(s.id())).isSameAs(s);
    }
    assertThat(Strategy.ids()).isEqualTo("none,exponential,full,equal,decorrelated,idem,idem-budget");
    assertThatThrownBy(() -> Strategy.ofId("jitter")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown strategy 'jitter'; known strategies: none,exponential,full,equal,decorrelated,idem,"
            + "idem-budget");
  }
}
