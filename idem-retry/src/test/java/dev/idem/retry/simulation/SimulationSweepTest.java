package dev.idem.retry.simulation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class SimulationSweepTest {

  @Test
  void rowsGoByClientCountThenByStrategyInTheGivenOrder() {
    Sweep sweep = Sweep.builder().clients(5, 25, 10).strategies(Strategy.FULL, Strategy.NONE).runs(3).seed(1).build();

    List<Sweep.Row> rows = sweep.run();

    assertThat(sweep.clientCounts()).containsExactly(5, 15, 25);
    assertThat(rows).extracting(r -> r.clients() + " " + r.strategy().id())
        .containsExactly("5 full", "5 none", "15 full", "15 none", "25 full", "25 none");
  }

  @Test
  void eachRowIsWhatTheSingleSimulationGives() {
    List<Sweep.Row> rows = Sweep.builder().clients(20, 30, 10).strategies(Strategy.IDEM_BUDGET).runs(4).seed(99)
        .build().run();

    Result direct = ContentionSimulation.builder().clients(30).runs(4).seed(99).strategy(Strategy.IDEM_BUDGET).build()
        .run();

    assertThat(rows.get(1).result()).isEqualTo(direct);
  }

  @Test
  void theSameSeedGivesTheSameRows() {
    Sweep.Builder builder = Sweep.builder().clients(10, 40, 15).runs(5).seed(-4);

    assertThat(builder.build().run()).isEqualTo(builder.build().run());
  }

  @Test
  void aStepPastTheEndStopsBeforeIt() {
    assertThat(Sweep.builder().clients(10, 35, 10).build().clientCounts()).containsExactly(10, 20, 30);
  }

  @Test
  void theBuilderNamesTheBadParameter() {
    assertThatThrownBy(() -> Sweep.builder().clients(0, 10, 1).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("clients from must be at least 1, was 0");
    assertThatThrownBy(() -> Sweep.builder().clients(10, 5, 1).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("clients to must be at least from (10), was 5");
    assertThatThrownBy(() -> Sweep.builder().clients(1, 5, 0).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("clients step must be at least 1, was 0");
    assertThatThrownBy(() -> Sweep.builder().strategies(Strategy.FULL, Strategy.FULL).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not repeat");
    assertThatThrownBy(() -> Sweep.builder().strategies(List.of()).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessage("strategies must not be empty");
  }
}
