package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SimulateCommandTest {
  private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

  @Test
  void writesAHeaderAndOneRowPerClientCountAndStrategy() {
    MainTest.Run run = MainTest.run("", "simulate", "--clients", "1:5:2", "--runs", "3", "--seed", "1",
        "--strategy", "none,idem-budget");

    assertThat(run.status()).isZero();
    assertThat(run.err()).isEmpty();
    String[] lines = run.out().split("\n", -1);
    assertThat(lines).hasSize(1 + 3 * 2 + 1);
    assertThat(lines[0]).isEqualTo("clients,strategy,mean_completion_ms,mean_calls");
    assertThat(Arrays.copyOfRange(lines, 1, 7)).extracting(l -> l.substring(0, l.indexOf(',', l.indexOf(',') + 1)))
        .containsExactly("1,none", "1,idem-budget", "3,none", "3,idem-budget", "5,none", "5,idem-budget");
    assertThat(Arrays.copyOfRange(lines, 1, 7)).allMatch(l -> l.matches("\\d+,[a-z-]+,\\d+\\.\\d,\\d+\\.\\d"));
    assertThat(lines[1]).endsWith(",2.0");
    assertThat(lines[7]).isEmpty();
  }

  @Test
  void allStrategiesByDefault() {
    MainTest.Run run = MainTest.run("", "simulate", "--clients=4", "--runs=2");

    assertThat(run.status()).isZero();
    assertThat(run.out().lines().skip(1).map(l -> l.split(",")[1]))
        .containsExactly("none", "exponential", "full", "equal", "decorrelated", "idem", "idem-budget");
  }

  @Test
  void theSameSeedGivesTheSameBytes() {
    String[] args = {"simulate", "--clients", "10:30:10", "--runs", "5", "--seed", "77"};

    MainTest.Run first = MainTest.run("", args);
    MainTest.Run second = MainTest.run("", args);
    MainTest.Run otherSeed = MainTest.run("", "simulate", "--clients", "10:30:10", "--runs", "5", "--seed", "78");

    assertThat(second.out()).isEqualTo(first.out());
    assertThat(otherSeed.out()).isNotEqualTo(first.out());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--clients 5:1:1       | --clients TO (1) is less than FROM (5) in '5:1:1'",
      "--clients 0:10:1      | --clients FROM must be between 1 and 100000, was 0",
      "--clients 1:10:0      | --clients STEP must be between 1 and 100000, was 0",
      "--clients 1:10        | --clients must be FROM:TO:STEP or N, was '1:10'",
      "--clients a:b:c       | --clients FROM must be a whole number, was 'a'",
      "--runs 0              | --runs must be between 1 and 100000, was 0",
      "--runs                | --runs needs a value",
      "--seed x              | --seed must be a 64-bit integer, was 'x'",
      "--strategy nope       | unknown strategy 'nope'; known strategies: none,exponential,full,equal,decorrelated,idem,idem-budget",
      "--strategy full,,none | --strategy has an empty name in 'full,,none'",
      "--strategy full,full  | --strategy lists 'full' twice",
      "--png                 | --png needs a value",
      "--bogus               | unknown option '--bogus'",
      "extra                 | unexpected argument 'extra'",
  })
  void badOptionsExitWithStatusTwoAndSayWhy(String options, String message) {
    String[] args = ("simulate " + options).split(" +");

    MainTest.Run run = MainTest.run("", args);

    assertThat(run.status()).isEqualTo(Main.USAGE);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith("idem simulate: " + message).contains("usage: idem simulate");
  }

  @Test
  void helpPrintsTheUsage() {
    MainTest.Run run = MainTest.run("", "simulate", "--help");

    assertThat(run.status()).isZero();
    assertThat(run.out()).startsWith("usage: idem simulate").contains("--png FILE");
  }

  @Test
  void pngWritesAValidPngAndStillPrintsTheCsv(@TempDir Path dir) throws Exception {
    Path png = dir.resolve("chart.png");

    MainTest.Run run = MainTest.run("", "simulate", "--clients", "2:6:2", "--runs", "2", "--png", png.toString());

    assertThat(run.status()).isZero();
    assertThat(run.out()).startsWith("clients,strategy,mean_completion_ms,mean_calls\n");
    byte[] bytes = Files.readAllBytes(png);
    assertThat(bytes.length).isGreaterThan(1_000);
    assertThat(Arrays.copyOf(bytes, PNG_SIGNATURE.length)).isEqualTo(PNG_SIGNATURE);
  }

  @Test
  void aPngThatCannotBeWrittenFailsWithStatusOneAfterTheCsv(@TempDir Path dir) {
    Path png = dir.resolve("missing").resolve("chart.png");

    MainTest.Run run = MainTest.run("", "simulate", "--clients", "2", "--runs", "1", "--strategy", "full", "--png",
        png.toString());

    assertThat(run.status()).isEqualTo(Main.FAILED);
    assertThat(run.out()).startsWith("clients,strategy,mean_completion_ms,mean_calls\n2,full,");
    assertThat(run.err()).startsWith("idem simulate: cannot write PNG '" + png + "'");
  }
}
