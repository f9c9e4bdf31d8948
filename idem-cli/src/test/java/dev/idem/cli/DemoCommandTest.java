package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code idem demo} starts the payments service, walks the HTTP contract and exits 0 only when every step held. */
class DemoCommandTest {
  @TempDir
  Path data;

  @Test
  void demoWalksThroughEveryScenarioOverHttpAndExitsZero() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int status = Main.run(new String[] {"demo", "--data", data.toString()}, new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(status).as(printed + err.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(printed).contains("Done: 20 checks; every step behaved as the contract says").doesNotContain("FAIL");
    assertThat(printed.lines().filter(l -> l.startsWith("   ok ")).count()).isEqualTo(20);
    assertThat(printed).contains("> POST /payments", "< 201  Idempotency-Status: stored",
        "< 201  Idempotency-Status: replayed", "< 422", "< 504");
    assertThat(data).as("a folder given with --data is kept, with the run's database")
        .isDirectoryContaining(p -> p.getFileName().toString().startsWith("demo-"));
  }

  @Test
  void aDemoThatFailsRemovesTheTemporaryFolderItMade(@TempDir Path tmp) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    // a second server.port joins the demo's into "0,-1", which Spring Boot cannot bind: the start fails
    DemoCommand demo = new DemoCommand(tmp, List.of("--server.port=-1"));

    int status = demo.run(List.of("--quiet"), new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(Main.FAILED);
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("H2 at " + tmp.resolve("idem-demo-"));
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("idem demo: ");
    try (Stream<Path> left = Files.list(tmp)) {
      assertThat(left).as("what the failed demo left in its temporary root").isEmpty();
    }
  }

  @Test
  void unknownOptionIsAUsageError() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int status = Main.run(new String[] {"demo", "--bogus"}, new ByteArrayInputStream(new byte[0]),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(status).isEqualTo(Main.USAGE);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown option '--bogus'");
  }
}
