package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs {@code ./idem demo} and {@code ./idem serve} as a user would, in a JVM of their own (the launcher, with this
 * test's classpath in {@code IDEM_CLASSPATH}): stdout carries only the command's own lines, the service's logs go to
 * stderr, and the demo leaves no temporary folder behind.
 */
class ConsoleOutputTest {
  private static final Path SCRIPT = repositoryRoot().resolve("idem");

  /** Every line {@code idem demo --quiet} itself prints. */
  private static final Pattern DEMO_LINE = Pattern.compile(String.join("|",
      "", "Starting the payments service \\(H2 at .*\\) \\.\\.\\.", "Listening on http://127\\.0\\.0\\.1:\\d+/",
      "\\d\\. .*", "   ok    .*", "   \\d+ answers: .*", "   alice: \\{.*\\}",
      "   \\(in progress; retrying after \\d+ s, as Retry-After says\\)",
      "Done: 20 checks; every step behaved as the contract says\\."));

  @TempDir
  Path work;

  private ProcessBuilder idem(String... args) {
    List<String> command = new java.util.ArrayList<>(List.of(SCRIPT.toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).directory(work.toFile());
    pb.environment().put("IDEM_CLASSPATH", System.getProperty("java.class.path"));
    return pb;
  }

  @Test
  void demoPrintsOnlyItsWalkthroughOnStdoutAndRemovesItsTemporaryFolder() throws Exception {
    Path tmp = Files.createDirectories(work.resolve("tmp"));
    ProcessBuilder pb = idem("demo", "--quiet");
    pb.environment().put("IDEM_JAVA_OPTS", "-Djava.io.tmpdir=" + tmp);
    Path out = work.resolve("out.txt");
    Path err = work.resolve("err.txt");
    Process process = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    process.getOutputStream().close();

    assertThat(process.waitFor(5, TimeUnit.MINUTES)).as("the demo finished").isTrue();
    List<String> lines = Files.readAllLines(out);
    String stderr = Files.readString(err);

    assertThat(process.exitValue()).as(String.join("\n", lines) + "\n" + stderr).isZero();
    assertThat(lines).as("stdout").allSatisfy(l -> assertThat(l).matches(DEMO_LINE))
        .last().isEqualTo("Done: 20 checks; every step behaved as the contract says.");
    assertThat(stderr).as("the service's warning about the default admin key, on stderr")
        .contains("WARN").contains("payments.admin-key");
    try (Stream<Path> left = Files.list(tmp)) {
      assertThat(left.filter(p -> p.getFileName().toString().startsWith("idem-demo-")))
          .as("the demo's temporary folder is gone").isEmpty();
    }
  }

  @Test
  void servePrintsOnlyItsListeningLineOnStdout() throws Exception {
    Path out = work.resolve("out.txt");
    Path err = work.resolve("err.txt");
    // stdout to a file, not a pipe read by a thread: the JDK closes a child's pipe under a reader when the child exits
    Process process = idem("serve", "--port", "0").redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    process.getOutputStream().close();
    try {
      Eventually.await("serve listening", Duration.ofMinutes(3), () -> read(out),
          text -> text.contains(" is listening on ") || !process.isAlive());
    } finally {
      process.destroy();
      assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("serve stopped on SIGTERM").isTrue();
    }
    List<String> lines = Files.readAllLines(out);

    assertThat(lines).as("stdout").singleElement().asString()
        .matches("idem serve: the payments service is listening on http://127\\.0\\.0\\.1:\\d+/ \\(Ctrl-C stops it\\)");
    assertThat(Files.readString(err)).as("the service's banner and logs, on stderr")
        .contains("Spring Boot ::", "Tomcat started on port", "payments.admin-key");
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path repositoryRoot() {
    String basedir = System.getProperty("basedir");
    Path module = basedir != null ? Paths.get(basedir) : Paths.get("").toAbsolutePath();
    return module.toAbsolutePath().getParent();
  }
}
