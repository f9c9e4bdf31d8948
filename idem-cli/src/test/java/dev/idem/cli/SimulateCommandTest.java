package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

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
    assertThat(lines[0]).isEqualTo("clients,strategy,mean_completion_ms,mean_calls,mean_writes");
    assertThat(Arrays.copyOfRange(lines, 1, 7)).extracting(l -> l.substring(0, l.indexOf(',', l.indexOf(',') + 1)))
        .containsExactly("1,none", "1,idem-budget", "3,none", "3,idem-budget", "5,none", "5,idem-budget");
    assertThat(Arrays.copyOfRange(lines, 1, 7))
        .allMatch(l -> l.matches("\\d+,[a-z-]+,\\d+\\.\\d,\\d+\\.\\d,\\d+\\.\\d"));
    assertThat(lines[1]).endsWith(",2.0,1.0");
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
      "--strategy nope       | unknown strategy 'nope'; known strategies: none,exponential,full,equal,decorrelated,"
          + "idem,idem-budget",
      "--strategy full,,none | --strategy has an empty name in 'full,,none'",
      "--strategy full,full  | --strategy lists 'full' twice",
      "--png                 | --png needs a value",
      "--model               | --model needs a value",
      "--model aws           | unknown model 'aws'; known models: idem,aws-2015",
      "--model=              | unknown model ''; known models: idem,aws-2015",
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
    assertThat(run.out()).startsWith("usage: idem simulate").contains("--png FILE").contains("--model NAME")
        .contains("aws-2015");
  }

  @Test
  void theAwsModelPrintsTheSameColumnsAndItsOwnNumbers() {
    String[] options = {"--clients", "10:30:10", "--runs", "5", "--seed", "77", "--strategy", "exponential,full"};

    MainTest.Run aws = MainTest.run("", concat(new String[] {"simulate", "--model", "aws-2015"}, options));
    MainTest.Run idem = MainTest.run("", concat(new String[] {"simulate", "--model=idem"}, options));
    MainTest.Run byDefault = MainTest.run("", concat(new String[] {"simulate"}, options));

    assertThat(aws.status()).isZero();
    assertThat(aws.err()).isEmpty();
    assertThat(aws.out().lines()).first().isEqualTo("clients,strategy,mean_completion_ms,mean_calls,mean_writes");
    assertThat(aws.out().lines().skip(1).map(l -> l.substring(0, l.indexOf(',', l.indexOf(',') + 1))))
        .containsExactly("10,exponential", "10,full", "20,exponential", "20,full", "30,exponential", "30,full");
    // Every read is followed by one write, so the writes are half the calls in both models.
    assertThat(aws.out().lines().skip(1).map(l -> l.split(","))).allSatisfy(f ->
        assertThat(Double.parseDouble(f[4]) * 2).isCloseTo(Double.parseDouble(f[3]), within(0.1)));
    assertThat(aws.out()).isNotEqualTo(idem.out());
    assertThat(byDefault.out()).isEqualTo(idem.out());
  }

  @Test
  void theAwsModelGivesTheSameBytesForTheSameOptions() {
    String[] args = {"simulate", "--model", "aws-2015", "--clients", "10:30:10", "--runs", "5", "--seed", "77"};

    MainTest.Run first = MainTest.run("", args);
    MainTest.Run second = MainTest.run("", args);

    assertThat(first.status()).isZero();
    assertThat(second.out()).isEqualTo(first.out());
  }

  @Test
  void theAwsModelDrawsItsChart(@TempDir Path dir) throws Exception {
    Path png = dir.resolve("aws.png");

    MainTest.Run run = MainTest.run("", "simulate", "--model", "aws-2015", "--clients", "2:6:2", "--runs", "2",
        "--png", png.toString());

    assertThat(run.status()).isZero();
    byte[] bytes = Files.readAllBytes(png);
    assertThat(Arrays.copyOf(bytes, PNG_SIGNATURE.length)).isEqualTo(PNG_SIGNATURE);
  }

  private static String[] concat(String[] first, String[] second) {
    String[] all = Arrays.copyOf(first, first.length + second.length);
    System.arraycopy(second, 0, all, first.length, second.length);
    return all;
  }

  @Test
  void pngWritesAValidPngAndStillPrintsTheCsv(@TempDir Path dir) throws Exception {
    Path png = dir.resolve("chart.png");

    MainTest.Run run = MainTest.run("", "simulate", "--clients", "2:6:2", "--runs", "2", "--png", png.toString());

    assertThat(run.status()).isZero();
    assertThat(run.out()).startsWith("clients,strategy,mean_completion_ms,mean_calls,mean_writes\n");
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
    assertThat(run.out()).startsWith("clients,strategy,mean_completion_ms,mean_calls,mean_writes\n2,full,");
    assertThat(run.err()).startsWith("idem simulate: cannot write PNG '" + png + "'");
  }
}
