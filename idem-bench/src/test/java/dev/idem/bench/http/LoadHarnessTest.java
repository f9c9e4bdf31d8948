package dev.idem.bench.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class LoadHarnessTest {
  private static final LoadHarness SHORT =
      LoadHarness.builder().concurrency(4).passSeconds(1).passes(2).warmupSeconds(0).drainSeconds(2).build();

  private static byte[] numbered(int i) {
    return ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void sendsMethodHeadersBodyAndKeysPerStrategyAndAlternatesScenarios() throws IOException {
    try (LocalServer server = new LocalServer()) {
      Scenario plain = Scenario.builder("plain").url(server.url("/plain"))
          .header("Authorization", "Bearer sk_test_alice").build();
      Scenario unique = Scenario.builder("unique").method("POST").url(server.url("/keyed/unique"))
          .header("Authorization", "Bearer sk_test_alice").header("Content-Type", "application/json")
          .body(LoadHarnessTest::numbered).keys(KeyStrategy.unique()).expectStatus(201).build();
      Scenario pool = Scenario.builder("pool").method("PUT").url(server.url("/keyed/pool"))
          .header("Content-Type", "application/json").body(LoadHarnessTest::numbered)
          .keys(KeyStrategy.fixedPool(5)).expectStatus(200, 201).build();

      Report report = SHORT.run(List.of(plain, unique, pool));

      List<LocalServer.Seen> plainSeen = server.seen("/plain");
      assertThat(plainSeen).isNotEmpty().allSatisfy(s -> {
        assertThat(s.method()).isEqualTo("GET");
        assertThat(s.header("Authorization")).isEqualTo("Bearer sk_test_alice");
        assertThat(s.header(KeyStrategy.HEADER)).isNull();
        assertThat(s.body()).isEmpty();
      });

      List<LocalServer.Seen> uniqueSeen = server.seen("/keyed/unique");
      assertThat(uniqueSeen).isNotEmpty().allSatisfy(s -> {
        assertThat(s.method()).isEqualTo("POST");
        assertThat(s.header("Authorization")).isEqualTo("Bearer sk_test_alice");
        assertThat(s.header("Content-Type")).isEqualTo("application/json");
        assertThat(s.header(KeyStrategy.HEADER)).matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
            + "[0-9a-f]{12}");
        assertThat(s.body()).matches("\\{\"n\":\\d+}");
      });
      assertThat(uniqueSeen.stream().map(s -> s.header(KeyStrategy.HEADER)).distinct().count())
          .isEqualTo(uniqueSeen.size());
      assertThat(uniqueSeen.stream().map(LocalServer.Seen::body).distinct().count()).isEqualTo(uniqueSeen.size());

      List<LocalServer.Seen> poolSeen = server.seen("/keyed/pool");
      Set<String> poolKeys = IntStream.range(0, 5).mapToObj(i -> "k-" + i).collect(Collectors.toSet());
      assertThat(poolSeen.stream().map(s -> s.header(KeyStrategy.HEADER)).collect(Collectors.toSet()))
          .isEqualTo(poolKeys);
      assertThat(poolSeen.subList(0, 5).stream().map(s -> s.header(KeyStrategy.HEADER)))
          .as("warm-up sends each pool key once before anything else")
          .containsExactlyInAnyOrderElementsOf(poolKeys);
      assertThat(poolSeen).allSatisfy(s -> {
        assertThat(s.method()).isEqualTo("PUT");
        assertThat(s.body()).isEqualTo("{\"n\":" + s.header(KeyStrategy.HEADER).substring(2) + "}");
      });
      assertThat(poolSeen.size()).isGreaterThan(5);

      assertThat(report.passesInRunOrder()).extracting(PassResult::scenario)
          .containsExactly("plain", "unique", "pool", "plain", "unique", "pool");
      assertThat(report.passesInRunOrder()).extracting(PassResult::pass).containsExactly(1, 1, 1, 2, 2, 2);
      assertThat(report.passesInRunOrder()).extracting(PassResult::runOrder).containsExactly(0, 1, 2, 3, 4, 5);
      assertThat(phasesAsSeenByServer(server)).as("pool priming, then passes alternating in scenario order")
          .containsExactly("/keyed/pool", "/plain", "/keyed/unique", "/keyed/pool", "/plain", "/keyed/unique",
              "/keyed/pool");

      for (ScenarioResult s : report.scenarios()) {
        assertThat(s.passes()).hasSize(2);
        assertThat(s.errors()).isZero();
        assertThat(s.passes()).allSatisfy(p -> {
          assertThat(p.requests()).isPositive();
          assertThat(p.p50Micros()).isPositive();
          assertThat(p.maxMicros()).isGreaterThanOrEqualTo(p.p99Micros());
        });
      }
      assertThat(report.scenario("plain").requests()).isLessThanOrEqualTo(plainSeen.size());
      assertThat(report.scenario("unique").requests()).isLessThanOrEqualTo(uniqueSeen.size());
      assertThat(report.scenario("pool").requests() + 5).isLessThanOrEqualTo(poolSeen.size());
      assertThat(report.warnings()).isEmpty();
      assertThat(report.pairedRatios("unique", "plain")).hasSize(2);
      assertThat(report.toMarkdown()).contains("| unique / plain |");
    }
  }

  private static List<String> phasesAsSeenByServer(LocalServer server) {
    List<String> phases = new ArrayList<>();
    for (LocalServer.Seen s : server.all()) {
      if (phases.isEmpty() || !Objects.equals(phases.get(phases.size() - 1), s.path())) {
        phases.add(s.path());
      }
    }
    return phases;
  }

  @Test
  void countsUnexpectedStatusesPerStatus() throws IOException {
    try (LocalServer server = new LocalServer()) {
      Scenario flaky = Scenario.builder("flaky").url(server.url("/flaky")).expectStatus(200).build();

      Report report = SHORT.run(List.of(flaky));

      ScenarioResult r = report.scenario("flaky");
      assertThat(r.errorsByStatus()).containsOnlyKeys(500);
      assertThat(r.errorsByException()).isEmpty();
      assertThat(r.errors()).isEqualTo(r.errorsByStatus().get(500)).isPositive().isLessThanOrEqualTo(
          server.flaky500s());
      assertThat(r.passes()).allSatisfy(p -> {
        assertThat(p.errors()).isEqualTo(p.errorsByStatus().get(500));
        assertThat(p.succeeded()).isPositive();
      });
      assertThat(report.toMarkdown()).contains("status 500: ");
      assertThat(report.toJson()).contains("\"errorsByStatus\":{\"500\":");
    }
  }

  @Test
  void saysLoudlyWhenEveryRequestOfAPassFailed() throws IOException {
    try (LocalServer server = new LocalServer()) {
      Scenario wrong = Scenario.builder("wrong").url(server.url("/plain")).expectStatus(201).build();

      Report report = LoadHarness.builder().concurrency(2).passSeconds(1).passes(1).warmupSeconds(0).build()
          .run(List.of(wrong));

      PassResult pass = report.scenario("wrong").passes().get(0);
      assertThat(pass.allFailed()).isTrue();
      assertThat(pass.errorsByStatus()).containsOnlyKeys(200);
      assertThat(pass.throughput()).isZero();
      assertThat(report.clean()).isFalse();
      assertThat(report.warnings()).singleElement().asString()
          .contains("wrong", "pass 1", "no request succeeded", "status 200");
      assertThat(report.toMarkdown()).contains("**WARNING:", "**ALL FAILED**");
      assertThat(report.toJson()).contains("\"allFailed\":true", "\"medianP50Micros\":null");
    }
  }

  @Test
  void refusedConnectionsAreErrorsOfTheirExceptionClass() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    Scenario refused = Scenario.builder("refused").url("http://127.0.0.1:" + closedPort + "/x")
        .keys(KeyStrategy.fixedPool(3)).build();

    Report report = LoadHarness.builder().concurrency(2).passSeconds(1).passes(1).warmupSeconds(0).build()
        .run(List.of(refused));

    PassResult pass = report.scenario("refused").passes().get(0);
    assertThat(pass.errorsByException()).containsKey("java.net.ConnectException");
    assertThat(pass.errorsByStatus()).isEmpty();
    assertThat(pass.allFailed()).isTrue();
    assertThat(report.warnings()).anySatisfy(w -> assertThat(w).contains("only 0 of 3 pool keys"))
        .anySatisfy(w -> assertThat(w).contains("no request succeeded", "java.net.ConnectException"));
  }

  @Test
  void rejectsEmptyAndDuplicateScenarioLists() {
    Scenario a = Scenario.builder("a").url("http://127.0.0.1:1/").build();
    assertThatThrownBy(() -> SHORT.run(List.of())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("scenarios");
    assertThatThrownBy(() -> SHORT.run(List.of(a, a))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a twice");
  }

  @Test
  void builderNamesTheBadParameterAndValue() {
    assertThatThrownBy(() -> LoadHarness.builder().concurrency(0)).hasMessage(
        "concurrency must be between 1 and 1024, got 0");
    assertThatThrownBy(() -> LoadHarness.builder().passSeconds(0)).hasMessageContaining("passSeconds")
        .hasMessageContaining("got 0");
    assertThatThrownBy(() -> LoadHarness.builder().passes(-1)).hasMessageContaining("passes")
        .hasMessageContaining("got -1");
    assertThatThrownBy(() -> LoadHarness.builder().warmupSeconds(-2)).hasMessageContaining("warmupSeconds")
        .hasMessageContaining("got -2");
    assertThatThrownBy(() -> LoadHarness.builder().drainSeconds(61)).hasMessageContaining("drainSeconds")
        .hasMessageContaining("got 61");
  }
}
