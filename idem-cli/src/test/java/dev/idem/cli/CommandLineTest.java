package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Every command's command-line errors: each names the command, says what is wrong, and exits 2. */
class CommandLineTest {

  @ParameterizedTest
  @ValueSource(strings = {"demo", "serve", "engine-demo", "fingerprint", "simulate", "chaos"})
  void anUnknownOptionIsNamedWithTheCommand(String command) {
    MainTest.Run run = MainTest.run("", command, "--wat");

    assertThat(run.status()).isEqualTo(Main.USAGE);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith("idem " + command + ": unknown option '--wat'\n");
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo", "serve", "engine-demo", "fingerprint", "simulate"})
  void anUnknownOptionPrintsTheCommandsUsage(String command) {
    MainTest.Run run = MainTest.run("", command, "--wat");

    assertThat(run.err()).contains("usage: idem " + command + " ");
  }

  static Stream<Arguments> optionsWithAValue() {
    return Stream.of(
        Arguments.of("demo", "--data"),
        Arguments.of("engine-demo", "--data"),
        Arguments.of("serve", "--port"),
        Arguments.of("serve", "--db"),
        Arguments.of("fingerprint", "--include"),
        Arguments.of("fingerprint", "--exclude"),
        Arguments.of("fingerprint", "--operation"),
        Arguments.of("simulate", "--clients"),
        Arguments.of("simulate", "--runs"),
        Arguments.of("simulate", "--seed"),
        Arguments.of("simulate", "--strategy"),
        Arguments.of("simulate", "--png"),
        Arguments.of("chaos", "--preset"),
        Arguments.of("chaos", "--duration"),
        Arguments.of("chaos", "--rate"),
        Arguments.of("chaos", "--instances"),
        Arguments.of("chaos", "--seed"),
        Arguments.of("chaos", "--db"),
        Arguments.of("chaos", "--kill-every"),
        Arguments.of("chaos", "--pg-restart-at"),
        Arguments.of("chaos", "--fault-rate"),
        Arguments.of("chaos", "--report"));
  }

  @ParameterizedTest
  @MethodSource("optionsWithAValue")
  void anOptionWithoutItsValueSaysTheValueIsMissing(String command, String option) {
    MainTest.Run run = MainTest.run("", command, option);

    assertThat(run.status()).isEqualTo(Main.USAGE);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith("idem " + command + ": " + option + " needs a value\n");
  }

  static Stream<Arguments> badServeCommandLines() {
    return Stream.of(
        Arguments.of(new String[] {"--wat"}, "unknown option '--wat'"),
        Arguments.of(new String[] {"--port"}, "--port needs a value"),
        Arguments.of(new String[] {"--port", "70000"}, "--port must be 0..65535, got '70000'"),
        Arguments.of(new String[] {"--port", "http"}, "--port must be 0..65535, got 'http'"),
        Arguments.of(new String[] {"--db", "postgres://localhost/test"}, "--db must be a JDBC URL"));
  }

  @ParameterizedTest
  @MethodSource("badServeCommandLines")
  void serveExplainsABadCommandLineAndPrintsItsUsage(String[] args, String problem) {
    String[] command = Stream.concat(Stream.of("serve"), Stream.of(args)).toArray(String[]::new);

    MainTest.Run run = MainTest.run("", command);

    assertThat(run.status()).isEqualTo(Main.USAGE);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith("idem serve: " + problem)
        .contains("\nusage: idem serve [--port N] [--db JDBC_URL]");
  }
}
