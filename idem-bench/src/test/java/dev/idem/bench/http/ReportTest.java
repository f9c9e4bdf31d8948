package dev.idem.bench.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReportTest {
  private static final LoadHarness SETTINGS = LoadHarness.builder().concurrency(4).passSeconds(1).passes(3).build();
  private static final long SECOND = 1_000_000_000L;

  /** A pass with {@code ok} successful requests in one second and the given latencies. */
  private static PassResult pass(String scenario, int pass, long ok, long p50, long p99) {
    return new PassResult(scenario, pass, 0, ok, Map.of(), Map.of(), 0, SECOND, p50, p50, p99, p99);
  }

  @Test
  void ratioIsTheMedianOfPerPassRatiosPairedByPassNumber() {
    ScenarioResult a = new ScenarioResult("a", "A", List.of(pass("a", 1, 100, 1, 1), pass("a", 2, 300, 1, 1),
        pass("a", 3, 90, 1, 1)));
    ScenarioResult b = new ScenarioResult("b", "B", List.of(pass("b", 1, 200, 1, 1), pass("b", 2, 100, 1, 1),
        pass("b", 3, 100, 1, 1)));
    Report report = new Report(SETTINGS, List.of(b, a), List.of());

    assertThat(report.pairedRatios("a", "b")).containsExactly(0.5, 3.0, 0.9);
    assertThat(report.ratio("a", "b")).isEqualTo(0.9);
    double ratioOfMedians = a.medianThroughput() / b.medianThroughput();
    assertThat(ratioOfMedians).as("not the ratio of medians").isCloseTo(1.0, within(1e-9));
    assertThat(report.ratio("b", "a")).isCloseTo(1 / 0.9, within(1e-9));
  }

  @Test
  void pairsByPassNumberNotListPositionAndSkipsPassesWithoutBaselineThroughput() {
    ScenarioResult a = new ScenarioResult("a", "A", List.of(pass("a", 1, 100, 1, 1), pass("a", 2, 100, 1, 1),
        pass("a", 4, 100, 1, 1)));
    ScenarioResult b = new ScenarioResult("b", "B", List.of(pass("b", 2, 50, 1, 1), pass("b", 4, 400, 1, 1),
        pass("b", 1, 0, 0, 0)));
    Report report = new Report(SETTINGS, List.of(b, a), List.of());

    assertThat(report.pairedRatios("a", "b")).containsExactly(2.0, 0.25);
    assertThat(report.ratio("a", "b")).isEqualTo(1.125);
  }

  @Test
  void ratioWithoutPairsIsNaNAndUnknownScenarioIsRejected() {
    ScenarioResult a = new ScenarioResult("a", "A", List.of(pass("a", 1, 100, 1, 1)));
    ScenarioResult b = new ScenarioResult("b", "B", List.of(pass("b", 2, 100, 1, 1)));
    Report report = new Report(SETTINGS, List.of(b, a), List.of());

    assertThat(report.ratio("a", "b")).isNaN();
    assertThat(report.toJson()).contains("\"median\":null,\"perPass\":[]");
    assertThatThrownBy(() -> report.ratio("a", "c")).hasMessageContaining("c");
  }

  @Test
  void scenarioMediansIgnoreLatencyOfPassesWithoutSuccess() {
    PassResult failed = new PassResult("a", 3, 2, 10, Map.of(503, 10L), Map.of(), 0, SECOND, 0, 0, 0, 0);
    ScenarioResult a = new ScenarioResult("a", "A", List.of(pass("a", 1, 100, 10, 50), pass("a", 2, 200, 30, 70),
        failed));

    assertThat(a.medianThroughput()).isEqualTo(100.0);
    assertThat(a.medianP50Micros()).isEqualTo(20.0);
    assertThat(a.medianP99Micros()).isEqualTo(60.0);
    assertThat(a.failedPasses()).containsExactly(failed);
    assertThat(a.errorsByStatus()).containsExactly(Map.entry(503, 10L));
    assertThat(failed.throughput()).isZero();
  }

  @Test
  void markdownAndJsonCarryTheTablesAndRatios() {
    PassResult a1 = new PassResult("idem", 1, 1, 1000, Map.of(500, 3L), Map.of("java.net.ConnectException", 2L), 1,
        2 * SECOND, 1500, 2000, 4000, 9000);
    ScenarioResult a = new ScenarioResult("idem", "POST http://127.0.0.1:1/x, keys unique", List.of(a1));
    ScenarioResult b = new ScenarioResult("base|line", "POST http://127.0.0.1:1/y, keys none",
        List.of(new PassResult("base|line", 1, 0, 1000, Map.of(), Map.of(), 0, SECOND, 1000, 1000, 2000, 3000)));
    Report report = new Report(SETTINGS, List.of(b, a), List.of("something \"odd\""));

    assertThat(report.toMarkdown())
        .contains("| scenario | median req/s | p50 ms | p99 ms | errors |")
        .contains("| idem | 497.5 | 1.500 | 4.000 | 5 (status 500: 3; java.net.ConnectException: 2) |")
        .contains("| base\\|line | 1000.0 | 1.000 | 2.000 | 0 |")
        .contains("| idem / base\\|line | 0.498 | 0.498 |")
        .contains("> **WARNING: something \"odd\"**");
    assertThat(report.toJson())
        .startsWith("{\"settings\":{\"concurrency\":4,\"passSeconds\":1,\"passes\":3,")
        .contains("\"name\":\"idem\"", "\"errorsByStatus\":{\"500\":3}",
            "\"errorsByException\":{\"java.net.ConnectException\":2}", "\"cutOff\":1", "\"throughput\":497.5",
            "\"numerator\":\"idem\",\"denominator\":\"base|line\",\"median\":0.4975,\"perPass\":[0.4975]",
            "\"warnings\":[\"something \\\"odd\\\"\"]")
        .endsWith("}");
  }

  @Test
  void valueObjectsValidate() {
    assertThatThrownBy(() -> new PassResult("a", 0, 0, 1, Map.of(), Map.of(), 0, 1, 0, 0, 0, 0))
        .hasMessageContaining("pass").hasMessageContaining("got 0");
    assertThatThrownBy(() -> new PassResult("a", 1, 0, 1, Map.of(500, 2L), Map.of(), 0, 1, 0, 0, 0, 0))
        .hasMessageContaining("errors (2) exceed requests (1)");
    assertThatThrownBy(() -> new PassResult("a", 1, 0, 1, Map.of(), Map.of(), 0, 1, 5, 4, 6, 7))
        .hasMessageContaining("p50");
    assertThatThrownBy(() -> new ScenarioResult("a", "A", List.of(pass("b", 1, 1, 1, 1))))
        .hasMessageContaining("scenario b");
    ScenarioResult a = new ScenarioResult("a", "A", List.of());
    assertThatThrownBy(() -> new Report(SETTINGS, List.of(a, a), List.of())).hasMessageContaining("distinct");
  }
}
