package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the {@code ./idem} launcher at the repository root as a user would, from another directory. The launcher is
 * given this test's classpath through {@code IDEM_CLASSPATH}, so the test does not start a nested Maven build
 * inside the one running it.
 */
class LauncherTest {
  private static final Path SCRIPT = repositoryRoot().resolve("idem");

  @TempDir
  Path elsewhere;

  record Result(int status, String out, String err) {}

  private Result launch(String stdin, String... args) throws IOException, InterruptedException {
    List<String> command = new java.util.ArrayList<>(List.of(SCRIPT.toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).directory(elsewhere.toFile());
    pb.environment().put("IDEM_CLASSPATH", System.getProperty("java.class.path"));
    Path out = elsewhere.resolve("out.txt");
    Path err = elsewhere.resolve("err.txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process process = pb.start();
    try (OutputStream in = process.getOutputStream()) {
      in.write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("launcher finished").isTrue();
    return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
  }

  @Test
  void scriptIsExecutable() {
    assertThat(Files.isExecutable(SCRIPT)).as(SCRIPT + " is executable").isTrue();
  }

  @Test
  void fingerprintsStdinFromAnyDirectory() throws Exception {
    Result result = launch("{\"b\":1,\"a\":2}\n", "fingerprint", "--operation", "POST /payments");

    assertThat(result.status()).isZero();
    assertThat(result.out()).isEqualTo(MainTest.sha256("POST /payments\nJ{\"a\":2,\"b\":1}") + "\n");
    assertThat(result.err()).isEmpty();
  }

  @Test
  void passesArgumentsWithSpacesAndReportsMalformedInput() throws Exception {
    Result result = launch("{\"a\": 1}\n{oops}\n", "fingerprint", "--canonical", "--exclude", "/a b");

    assertThat(result.status()).isEqualTo(1);
    assertThat(result.out()).isEqualTo("{\"a\":1}\n");
    assertThat(result.err()).startsWith("idem fingerprint: stdin line 2, column 2: ");
  }

  @Test
  void exitsWithStatus2ForAnUnknownCommand() throws Exception {
    Result result = launch("", "frobnicate");

    assertThat(result.status()).isEqualTo(2);
    assertThat(result.out()).isEmpty();
    assertThat(result.err()).contains("unknown command 'frobnicate'").contains("usage: idem");
  }

  private static Path repositoryRoot() {
    String basedir = System.getProperty("basedir");
    Path module = basedir != null ? Paths.get(basedir) : Paths.get("").toAbsolutePath();
    return module.toAbsolutePath().getParent();
  }
}
