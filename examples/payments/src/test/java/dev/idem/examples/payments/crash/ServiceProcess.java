package dev.idem.examples.payments.crash;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The payments service ({@code dev.idem.examples.payments.PaymentsApplication}) running in a child JVM on the test
 * class path, on a free loopback port, with its stdout and stderr in a log file. {@link #kill()} is a {@code kill -9}
 * ({@link Process#destroyForcibly()} is SIGKILL on Linux); {@link #close()} kills a child still alive, so a test
 * that fails halfway never leaves one behind.
 */
final class ServiceProcess implements AutoCloseable {
  static final String MAIN_CLASS = "dev.idem.examples.payments.PaymentsApplication";
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);
  private static final int LOG_TAIL_LINES = 80;

  private final Process process;
  private final Path log;
  private final URI base;

  private ServiceProcess(Process process, Path log, URI base) {
    this.process = process;
    this.log = log;
    this.base = base;
  }

  /**
   * Starts the service in {@code workDir} with {@code args} (plus a free port and quiet, plain logs) and waits, at
   * most {@code startup}, until {@code /actuator/health} answers UP. Fails with the log's tail if the child dies
   * first or the time runs out.
   */
  static ServiceProcess start(Path workDir, String name, List<String> args, Duration startup) throws IOException {
    int port = freePort();
    Path log = workDir.resolve(name + ".log");
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"),
        MAIN_CLASS,
        "--server.port=" + port,
        "--server.address=127.0.0.1",
        "--spring.main.banner-mode=off",
        "--spring.output.ansi.enabled=never",
        "--logging.level.root=WARN",
        "--logging.level.dev.idem=INFO"));
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command)
        .directory(workDir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
    // Only the arguments configure the child: nothing from the environment (IDEM_DB_URL, PORT, PAYMENTS_API_KEYS,
    // SPRING_DATASOURCE_*, ...) may point it at another database or add API keys.
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("IDEM_") || k.startsWith("PAYMENTS_") || k.startsWith("SPRING_")
        || k.startsWith("SERVER_") || k.startsWith("MANAGEMENT_") || k.startsWith("LOGGING_") || k.equals("PORT"));
    ServiceProcess service = new ServiceProcess(pb.start(), log, URI.create("http://127.0.0.1:" + port));
    try {
      service.awaitHealthy(startup);
    } catch (RuntimeException | Error e) {
      service.close();
      throw e;
    }
    return service;
  }

  URI uri(String pathAndQuery) {
    return base.resolve(pathAndQuery);
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** {@code kill -9}, then waits for the exit (bounded). */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      throw new AssertionError("service " + process.pid() + " survived SIGKILL for " + EXIT_TIMEOUT);
    }
  }

  /** SIGTERM (a graceful shutdown), waiting for the exit (bounded); a child that does not stop is killed. */
  void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      kill();
    }
  }

  /** The last lines of the child's log, for a failure message. */
  String logTail() {
    try {
      if (!Files.exists(log)) {
        return "(no log at " + log + ")";
      }
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      int from = Math.max(0, lines.size() - LOG_TAIL_LINES);
      return "--- last " + (lines.size() - from) + " of " + lines.size() + " lines of " + log + " (pid "
          + process.pid() + (process.isAlive() ? ", alive" : ", exit " + process.exitValue()) + "):\n"
          + String.join("\n", lines.subList(from, lines.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

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

  private void awaitHealthy(Duration startup) {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest health = HttpRequest.newBuilder(uri("/actuator/health")).timeout(Duration.ofSeconds(5)).GET().build();
    long deadline = System.nanoTime() + startup.toNanos();
    String last = "no answer yet";
    while (true) {
      if (!process.isAlive()) {
        throw new AssertionError("the service ended before it was healthy (" + last + ")\n" + logTail());
      }
      try {
        HttpResponse<String> r = http.send(health, HttpResponse.BodyHandlers.ofString());
        last = r.statusCode() + " " + r.body();
        if (r.statusCode() == 200 && r.body().contains("\"status\":\"UP\"")) {
          return;
        }
      } catch (ConnectException e) {
        last = "not listening yet";
      } catch (IOException e) {
        last = e.toString();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the service", e);
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("the service was not healthy within " + startup + " (" + last + ")\n"
            + logTail());
      }
      LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }
}
