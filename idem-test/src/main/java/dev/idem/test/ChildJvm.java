package dev.idem.test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM running a main class on the test classpath, for crash tests. The parent waits for the line the
 * child prints at its crash point (with a timeout, never a sleep), then kills it with SIGKILL. Close it in a finally
 * block: a child still alive is killed there.
 */
public final class ChildJvm implements AutoCloseable {
  /** JVM start, pool, schema and the work up to the crash point. */
  public static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);
  private static final String EOF = new String("<end of stdout>");

  private final Process process;
  private final Path log;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final List<String> otherLines = new ArrayList<>();

  private ChildJvm(Process process, Path log) {
    this.process = process;
    this.log = log;
    Thread reader = new Thread(this::pumpStdout, "crash-child-stdout-" + process.pid());
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * In the child: prints {@code line} for the parent's {@link #awaitLine} and blocks until the parent kills this JVM.
   * Call it at the crash point, from any thread.
   */
  public static void stopHere(String line) {
    System.out.println(line);
    System.out.flush();
    CountDownLatch never = new CountDownLatch(1);
    try {
      never.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Starts {@code mainClass} with {@code args}; its stderr goes to a file under {@code target/crash-logs}. */
  public static ChildJvm start(Class<?> mainClass, List<String> args) throws IOException {
    Path logs = Path.of("target", "crash-logs").toAbsolutePath();
    Files.createDirectories(logs);
    Path log = logs.resolve(mainClass.getSimpleName() + "-" + UUID.randomUUID() + ".stderr.log");
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"),
        mainClass.getName()));
    command.addAll(args);
    Process process = new ProcessBuilder(command)
        .redirectError(log.toFile())
        .start();
    return new ChildJvm(process, log);
  }

  private void pumpStdout() {
    try (BufferedReader in = new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        lines.add(line);
      }
    } catch (IOException ignored) {
      // the child was killed; the end marker follows
    } finally {
      lines.add(EOF);
    }
  }

  /**
   * The first line starting with {@code prefix}, waiting at most {@code timeout}. Fails, with the child's stderr, when
   * the child ends or the time runs out first.
   */
  public String awaitLine(String prefix, Duration timeout) throws InterruptedException, IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (line == null) {
        throw new AssertionError("child " + process.pid() + " printed no '" + prefix + "' line within " + timeout
            + describe());
      }
      if (line == EOF) {
        process.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        throw new AssertionError("child " + process.pid() + " ended before printing '" + prefix + "'"
            + (process.isAlive() ? "" : " (exit code " + process.exitValue() + ")") + describe());
      }
      if (line.startsWith(prefix)) {
        return line;
      }
      otherLines.add(line);
    }
  }

  /** Sends SIGKILL ({@link Process#destroyForcibly()} on Linux) and waits for the exit; returns the exit code. */
  public int kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      throw new AssertionError("child " + process.pid() + " survived SIGKILL for " + EXIT_TIMEOUT);
    }
    return process.exitValue();
  }

  private String describe() throws IOException {
    String stderr = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    return "\n--- other stdout lines: " + otherLines + "\n--- stderr (" + log + "):\n" + stderr;
  }

  /** Kills the child if it is still alive (a test that failed before its kill). */
  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
