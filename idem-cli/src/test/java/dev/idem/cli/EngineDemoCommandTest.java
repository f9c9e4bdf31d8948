package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code idem engine-demo} runs every scenario on embedded H2 and exits 0 only when each behaved. */
class EngineDemoCommandTest {
  @TempDir
  Path data;

  @Test
  void demoWalksThroughEveryStepAndExitsZero() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int status = Main.run(new String[] {"engine-demo", "--data", data.toString()}, new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(printed).contains("every step behaved as the contract says").doesNotContain("FAIL");
    assertThat(printed.lines().filter(l -> l.startsWith("   ok ")).count()).isEqualTo(13);
    assertThat(printed).contains("outcomes: {STORED=1, REPLAYED=19}", "PAYLOAD_MISMATCH differing [amount]",
        "refused as key_expired");
  }

  @Test
  void unknownOptionIsAUsageError() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int status = Main.run(new String[] {"engine-demo", "--bogus"}, new ByteArrayInputStream(new byte[0]),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(status).isEqualTo(Main.USAGE);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown option '--bogus'");
  }
}
