package dev.idem.bench.http;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * Measures {@link Scenario}s side by side: warms each one up, then runs {@code passes} rounds in which every
 * scenario in turn gets {@code passSeconds} of closed-loop load from {@code concurrency} worker threads (each sends a
 * request, waits for the whole response, records its latency, repeats). Alternating A, B, A, B, ... spreads the
 * noise of a shared machine over all scenarios; {@link Report#ratio} pairs passes by number.
 *
 * <pre>Report report = LoadHarness.builder().concurrency(16).passSeconds(5).passes(6).warmupSeconds(3).build()
 *     .run(List.of(baseline, idem));
 * System.out.println(report.toMarkdown());</pre>
 *
 * <p>Every phase has a deadline: a warm-up takes at most {@code warmupSeconds + drainSeconds} (plus up to 30 s for
 * sending each key of a {@link KeyStrategy#fixedPool} once), a pass at most {@code passSeconds + drainSeconds};
 * requests still in flight after the drain are abandoned and counted as cut off. Failures never end the run: a
 * refused connection counts as an error of its exception class, an unexpected status as an error of that status.
 *
 * <p>Immutable and thread-safe; each {@link #run} uses its own HTTP client and threads, so concurrent runs work but
 * disturb each other's numbers.
 */
public final class LoadHarness {
  static final Duration POOL_PRIMING_GRACE = Duration.ofSeconds(30);
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

  private final int concurrency;
  private final int passSeconds;
  private final int passes;
  private final int warmupSeconds;
  private final int drainSeconds;
  private final Consumer<String> progress;

  private LoadHarness(Builder b) {
    this.concurrency = b.concurrency;
    this.passSeconds = b.passSeconds;
    this.passes = b.passes;
    this.warmupSeconds = b.warmupSeconds;
    this.drainSeconds = b.drainSeconds;
    this.progress = b.progress;
  }

  public static Builder builder() {
    return new Builder();
  }

  public int concurrency() {
    return concurrency;
  }

  public int passSeconds() {
    return passSeconds;
  }

  public int passes() {
    return passes;
  }

  public int warmupSeconds() {
    return warmupSeconds;
  }

  public int drainSeconds() {
    return drainSeconds;
  }

  /**
   * Warms up each scenario, then measures them alternately, {@code passes} times each.
   *
   * @param scenarios at least one, with distinct names; the first is the baseline of the report's ratio section
   * @throws IllegalArgumentException for an empty list or duplicate names
   */
  public Report run(List<Scenario> scenarios) {
    Objects.requireNonNull(scenarios, "scenarios");
    if (scenarios.isEmpty()) {
      throw new IllegalArgumentException("scenarios must not be empty");
    }
    Set<String> names = new HashSet<>();
    for (Scenario s : scenarios) {
      if (!names.add(Objects.requireNonNull(s, "scenario").name())) {
        throw new IllegalArgumentException("scenario names must be distinct, got " + s.name() + " twice");
      }
    }
    ExecutorService httpPool = Executors.newFixedThreadPool(concurrency, daemon("idem-load-http-"));
    ExecutorService workers = Executors.newFixedThreadPool(concurrency, daemon("idem-load-worker-"));
    try {
      HttpClient client = HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .executor(httpPool)
          .connectTimeout(CONNECT_TIMEOUT)
          .followRedirects(HttpClient.Redirect.NEVER)
          .proxy(HttpClient.Builder.NO_PROXY)
          .build();
      Phase phase = new Phase(client, workers);
      List<Traffic> traffic = scenarios.stream().map(Traffic::new).toList();
      List<String> warnings = new ArrayList<>();
      for (Traffic t : traffic) {
        warnings.addAll(warmUp(phase, t));
      }
      Map<String, List<PassResult>> results = new LinkedHashMap<>();
      int runOrder = 0;
      for (int pass = 1; pass <= passes; pass++) {
        for (Traffic t : traffic) {
          PassResult r = measure(phase, t, pass, runOrder++);
          results.computeIfAbsent(r.scenario(), k -> new ArrayList<>()).add(r);
          report(String.format(Locale.ROOT, "pass %d/%d %s: %d requests, %.1f req/s, p50 %.3f ms, p99 %.3f ms,"
              + " %d errors%s", pass, passes, r.scenario(), r.requests(), r.throughput(), r.p50Micros() / 1e3,
              r.p99Micros() / 1e3, r.errors(), r.allFailed() ? " - NO REQUEST SUCCEEDED" : ""));
          if (r.allFailed()) {
            warnings.add("scenario " + r.scenario() + ", pass " + r.pass() + ": no request succeeded ("
                + describeErrors(r.requests(), r.errorsByStatus(), r.errorsByException(), r.cutOff()) + ")");
          }
        }
      }
      List<ScenarioResult> scenarioResults = new ArrayList<>();
      for (Traffic t : traffic) {
        Scenario s = t.scenario();
        scenarioResults.add(new ScenarioResult(s.name(), s.method() + " " + s.uri() + ", keys " + s.keys(),
            results.getOrDefault(s.name(), List.of())));
      }
      return new Report(this, scenarioResults, warnings);
    } finally {
      workers.shutdownNow();
      httpPool.shutdownNow();
    }
  }

  private List<String> warmUp(Phase phase, Traffic t) {
    List<String> warnings = new ArrayList<>();
    String name = t.scenario().name();
    long start = System.nanoTime();
    long warmEnd = start + TimeUnit.SECONDS.toNanos(warmupSeconds);
    KeyStrategy keys = t.scenario().keys();
    if (keys.kind() == KeyStrategy.Kind.FIXED_POOL) {
      long stopAt = warmEnd + POOL_PRIMING_GRACE.toNanos();
      List<Tally> tallies = phase.drive(t, t.poolOnce(), stopAt, stopAt + drainNanos());
      long primed = tallies.stream().mapToLong(Tally::succeeded).sum();
      report("warm-up " + name + ": sent each of " + keys.poolSize() + " pool keys once, " + primed + " succeeded");
      if (primed < keys.poolSize()) {
        Tally all = merge(tallies);
        warnings.add("scenario " + name + ": only " + primed + " of " + keys.poolSize() + " pool keys were stored"
            + " during warm-up (" + describeErrors(all.requests, all.errorsByStatus, all.errorsByException,
            all.cutOff) + "); requests with the others are not replays");
      }
    }
    if (System.nanoTime() - warmEnd < 0) {
      List<Tally> tallies = phase.drive(t, t.steady(), warmEnd, warmEnd + drainNanos());
      Tally all = merge(tallies);
      report("warm-up " + name + ": " + all.requests + " requests, " + all.succeeded() + " succeeded (discarded)");
      if (all.succeeded() == 0) {
        warnings.add("scenario " + name + ": no warm-up request succeeded (" + describeErrors(all.requests,
            all.errorsByStatus, all.errorsByException, all.cutOff) + ")");
      }
    }
    return warnings;
  }

  private PassResult measure(Phase phase, Traffic t, int pass, int runOrder) {
    long start = System.nanoTime();
    long stopAt = start + TimeUnit.SECONDS.toNanos(passSeconds);
    List<Tally> tallies = phase.drive(t, t.steady(), stopAt, stopAt + drainNanos());
    Tally all = merge(tallies);
    long finished = tallies.stream().mapToLong(x -> x.finishedAt).max().orElse(System.nanoTime());
    Histogram h = all.latencyMicros;
    boolean any = h.getTotalCount() > 0;
    return new PassResult(t.scenario().name(), pass, runOrder, all.requests, all.errorsByStatus,
        all.errorsByException, all.cutOff, Math.max(1, finished - start),
        any ? h.getValueAtPercentile(50) : 0, any ? h.getValueAtPercentile(90) : 0,
        any ? h.getValueAtPercentile(99) : 0, any ? h.getMaxValue() : 0);
  }

  private long drainNanos() {
    return TimeUnit.SECONDS.toNanos(drainSeconds);
  }

  private void report(String line) {
    progress.accept(line);
  }

  private static Tally merge(List<Tally> tallies) {
    Tally all = new Tally();
    for (Tally x : tallies) {
      all.latencyMicros.add(x.latencyMicros);
      x.errorsByStatus.forEach((k, v) -> all.errorsByStatus.merge(k, v, Long::sum));
      x.errorsByException.forEach((k, v) -> all.errorsByException.merge(k, v, Long::sum));
      all.requests += x.requests;
      all.cutOff += x.cutOff;
    }
    return all;
  }

  static String describeErrors(long requests, Map<Integer, Long> byStatus, Map<String, Long> byException,
      long cutOff) {
    StringBuilder sb = new StringBuilder().append(requests).append(" requests");
    new TreeMap<>(byStatus).forEach((k, v) -> sb.append(", status ").append(k).append(": ").append(v));
    new TreeMap<>(byException).forEach((k, v) -> sb.append(", ").append(k).append(": ").append(v));
    if (cutOff > 0) {
      sb.append(", cut off in flight: ").append(cutOff);
    }
    return sb.toString();
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** The client and worker threads of one run. */
  private final class Phase {
    private final HttpClient client;
    private final ExecutorService workers;

    Phase(HttpClient client, ExecutorService workers) {
      this.client = client;
      this.workers = workers;
    }

    /**
     * Runs {@code concurrency} closed loops over {@code source} until it runs dry or {@code stopAt}; waits for
     * requests in flight until {@code cutoff}.
     */
    List<Tally> drive(Traffic traffic, Supplier<HttpRequest> source, long stopAt, long cutoff) {
      List<Future<Tally>> futures = new ArrayList<>();
      for (int i = 0; i < concurrency; i++) {
        futures.add(workers.submit(() -> loop(traffic, source, stopAt, cutoff)));
      }
      List<Tally> tallies = new ArrayList<>();
      for (Future<Tally> f : futures) {
        try {
          long wait = Math.max(0, cutoff - System.nanoTime()) + TimeUnit.SECONDS.toNanos(1);
          tallies.add(f.get(wait, TimeUnit.NANOSECONDS));
        } catch (TimeoutException e) {
          f.cancel(true);
        } catch (ExecutionException e) {
          throw new IllegalStateException("load worker failed", e.getCause());
        } catch (InterruptedException e) {
          futures.forEach(x -> x.cancel(true));
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for load workers", e);
        }
      }
      return tallies;
    }

    private Tally loop(Traffic traffic, Supplier<HttpRequest> source, long stopAt, long cutoff) {
      Tally tally = new Tally();
      HttpResponse.BodyHandler<Void> discard = HttpResponse.BodyHandlers.discarding();
      while (System.nanoTime() - stopAt < 0 && !Thread.currentThread().isInterrupted()) {
        HttpRequest request;
        try {
          request = source.get();
        } catch (RuntimeException e) {
          tally.exception(e);
          continue;
        }
        if (request == null) {
          break;
        }
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<Void>> response = client.sendAsync(request, discard);
        try {
          int status = response.get(Math.max(0, cutoff - start), TimeUnit.NANOSECONDS).statusCode();
          long micros = (System.nanoTime() - start) / 1_000;
          if (traffic.expected(status)) {
            tally.success(micros);
          } else {
            tally.status(status);
          }
        } catch (ExecutionException e) {
          tally.exception(rootOf(e));
        } catch (TimeoutException | CancellationException e) {
          response.cancel(true);
          tally.cutOff++;
          break;
        } catch (InterruptedException e) {
          response.cancel(true);
          tally.cutOff++;
          Thread.currentThread().interrupt();
          break;
        }
      }
      tally.finishedAt = System.nanoTime();
      return tally;
    }
  }

  private static Throwable rootOf(Throwable e) {
    Throwable t = e;
    while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "%d threads, %d passes x %d s, warm-up %d s, drain %d s", concurrency, passes,
        passSeconds, warmupSeconds, drainSeconds);
  }

  /** Builds a {@link LoadHarness}; validates each value as it is set. Not thread-safe. */
  public static final class Builder {
    private int concurrency = 16;
    private int passSeconds = 5;
    private int passes = 6;
    private int warmupSeconds = 3;
    private int drainSeconds = 2;
    private Consumer<String> progress = line -> { };

    private Builder() {}

    /** Closed-loop worker threads, also the size of the HTTP client's executor; 1 to 1024, default 16. */
    public Builder concurrency(int concurrency) {
      this.concurrency = check("concurrency", concurrency, 1, 1024);
      return this;
    }

    /** Length of each measured pass; 1 to 3600, default 5. */
    public Builder passSeconds(int passSeconds) {
      this.passSeconds = check("passSeconds", passSeconds, 1, 3600);
      return this;
    }

    /** Measured passes per scenario; 1 to 1000, default 6. */
    public Builder passes(int passes) {
      this.passes = check("passes", passes, 1, 1000);
      return this;
    }

    /** Discarded load per scenario before the passes; 0 to 3600, default 3. */
    public Builder warmupSeconds(int warmupSeconds) {
      this.warmupSeconds = check("warmupSeconds", warmupSeconds, 0, 3600);
      return this;
    }

    /** How long requests in flight at the end of a pass or warm-up may still finish; 0 to 60, default 2. */
    public Builder drainSeconds(int drainSeconds) {
      this.drainSeconds = check("drainSeconds", drainSeconds, 0, 60);
      return this;
    }

    /** Receives one line per warm-up and pass as the run goes; default: discard. Called from the run's thread. */
    public Builder progress(Consumer<String> progress) {
      this.progress = Objects.requireNonNull(progress, "progress");
      return this;
    }

    public LoadHarness build() {
      return new LoadHarness(this);
    }

    private static int check(String name, int value, int min, int max) {
      if (value < min || value > max) {
        throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", got " + value);
      }
      return value;
    }
  }
}
