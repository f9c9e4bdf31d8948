package dev.idem.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One instance of the reference payments service for {@code idem chaos}: a child JVM on this JVM's class path,
 * always on the same loopback port, with its output appended to {@code instance-<n>.log}. It can be killed with
 * SIGKILL ({@link Process#destroyForcibly()}) and started again. Thread-safe: the chaos run's scheduler kills and
 * restarts while workers read {@link #isUp()}.
 */
final class ChaosInstance implements AutoCloseable {
  static final String MAIN_CLASS = "dev.idem.examples.payments.PaymentsApplication";
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);

  /** The most starts of one instance in a row, failed ones included. */
  static final int STARTS = 3;

  private final int index;
  private final int port;
  private final Path log;
  private final Path workDir;
  private final List<String> args;
  private final Map<String, String> environment;
  private Process process;
  private volatile boolean up;
  private int incarnation;
  private final AtomicLong failedStarts = new AtomicLong();

  /**
   * @param args the child's command-line arguments (visible to every user of this machine: no credentials)
   * @param environment variables set in the child's environment, for what must not be on its command line
   */
  ChaosInstance(int index, Path workDir, List<String> args, Map<String, String> environment) throws IOException {
    this.index = index;
    this.port = freePort();
    this.workDir = workDir;
    this.log = workDir.resolve("instance-" + index + ".log");
    this.args = List.copyOf(args);
    this.environment = Map.copyOf(environment);
  }

  int index() {
    return index;
  }

  URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + port + pathAndQuery);
  }

  /** Healthy at the last check and not killed since. */
  boolean isUp() {
    return up;
  }

  /**
   * Starts the child JVM and waits, at most {@code startup}, until {@code /actuator/health} answers UP. A child that
   * ends before it is healthy (its database was restarting while it started, say) is started again, as a process
   * supervisor would, up to {@value #STARTS} starts in all; the failed starts are counted ({@link #failedStarts()}).
   */
  void start(Duration startup) throws IOException {
    long deadline = System.nanoTime() + startup.toNanos();
    for (int start = 1; ; start++) {
      try {
        startOnce(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        return;
      } catch (EndedBeforeHealthy e) {
        failedStarts.incrementAndGet();
        if (start == STARTS) {
          throw new IOException(e.getMessage() + "; it ended before it was healthy " + STARTS + " times", e);
        }
      }
    }
  }

  /** Starts that ended before the child was healthy, and were tried again. */
  long failedStarts() {
    return failedStarts.get();
  }

  private void startOnce(Duration startup) throws IOException {
    Process p;
    synchronized (this) {
      incarnation++;
      List<String> command = new ArrayList<>(List.of(
          Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
          "-cp", System.getProperty("java.class.path"),
          MAIN_CLASS,
          "--server.port=" + port,
          "--server.address=127.0.0.1",
          "--spring.main.banner-mode=off",
          "--spring.output.ansi.enabled=never",
          "--logging.level.root=WARN",
          "--idem.name=chaos-" + index,
          "--payments.provider.seed=" + (index * 1_000L + incarnation)));
      command.addAll(args);
      Files.writeString(log, "---- start " + incarnation + " of instance " + index + " on port " + port + "\n",
          StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      // Only the arguments configure the child: nothing from the environment may point it at another database.
      Map<String, String> env = pb.environment();
      env.keySet().removeIf(k -> k.startsWith("IDEM_") || k.startsWith("PAYMENTS_") || k.startsWith("SPRING_")
          || k.startsWith("SERVER_") || k.startsWith("MANAGEMENT_") || k.startsWith("LOGGING_") || k.equals("PORT"));
      env.putAll(environment);
      process = pb.start();
      p = process;
    }
    awaitHealthy(p, startup);
    synchronized (this) {
      if (process == p && p.isAlive()) {
        up = true;
      }
    }
  }

  /** {@code kill -9} without waiting: for a shutdown hook, which must not block. */
  void killNow() {
    Process p;
    synchronized (this) {
      up = false;
      p = process;
    }
    if (p != null) {
      p.destroyForcibly();
    }
  }

  /** {@code kill -9}, then waits for the exit (bounded). */
  void kill() throws InterruptedException {
    Process p;
    synchronized (this) {
      up = false;
      p = process;
    }
    if (p != null) {
      p.destroyForcibly();
      p.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }
  }

  /** SIGTERM (graceful), waiting for the exit (bounded); a child that does not stop is killed. */
  void stop() throws InterruptedException {
    Process p;
    synchronized (this) {
      up = false;
      p = process;
    }
    if (p != null && p.isAlive()) {
      p.destroy();
      if (!p.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        kill();
      }
    }
  }

  @Override
  public void close() {
    try {
      kill();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void awaitHealthy(Process p, Duration startup) throws IOException {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest health = HttpRequest.newBuilder(uri("/actuator/health")).timeout(Duration.ofSeconds(5)).GET().build();
    long deadline = System.nanoTime() + startup.toNanos();
    String last = "no answer yet";
    while (true) {
      if (!p.isAlive()) {
        throw new EndedBeforeHealthy("instance " + index + " ended before it was healthy (" + last + "; its log: "
            + lastError() + "); see " + log);
      }
      try {
        HttpResponse<String> r = http.send(health, HttpResponse.BodyHandlers.ofString());
        last = r.statusCode() + " " + r.body();
        if (r.statusCode() == 200 && r.body().contains("\"status\":\"UP\"")) {
          return;
        }
      } catch (IOException e) {
        last = e.toString();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for instance " + index, e);
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IOException("instance " + index + " was not healthy within " + startup.toSeconds() + "s ("
            + last + "); see " + log);
      }
      LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
    }
  }

  /** The log's last line that names an error or an exception, for the message of a start that failed. */
  private String lastError() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      for (int i = lines.size() - 1; i >= 0; i--) {
        String line = lines.get(i);
        if (line.contains("Exception") || line.contains("ERROR") || line.startsWith("Caused by")) {
          return line.length() > 300 ? line.substring(0, 300) + "..." : line;
        }
      }
      return "no error line";
    } catch (IOException e) {
      return "unreadable: " + e;
    }
  }

  /** The child ended before it was healthy: another start may succeed. */
  private static final class EndedBeforeHealthy extends IOException {
    private static final long serialVersionUID = 1L;

    EndedBeforeHealthy(String message) {
      super(message);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }
}
