package dev.idem.bench.db;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One timed pass of a database load harness: {@code threads} workers call one operation in a loop until the pass's
 * time is up; the pass reports its throughput, the CPU time this JVM and every {@code postgres} process spent per
 * operation (from {@code /proc}), the CPU time of the pool's own backends per operation (the part of the server's
 * that other sessions on a shared server cannot skew), and, through {@link PgCounters}, the commits and WAL bytes per
 * operation.
 *
 * <pre>LoadPass.Result r = LoadPass.run("raw read", 8, 5, new PgCounters(pool, 8), () -&gt; readOneRow());</pre>
 */
public final class LoadPass {
  private LoadPass() {}

  /** One operation of a pass, called again and again by each worker. */
  @FunctionalInterface
  public interface Op {
    /** Runs the operation once; an exception ends the pass with a failure. */
    void run() throws Exception;
  }

  /**
   * A pass's figures; the CPU times, commits and WAL bytes are per operation. {@code walFrom} and {@code walTo} are
   * the WAL positions around the pass, in bytes from the WAL's start (for {@link WalBreakdown}).
   */
  public record Result(String name, long ops, double seconds, double clientCpuUs, double dbCpuUs,
      double backendCpuUs, double commitsPerOp, double walBytesPerOp, long walFrom, long walTo) {
    /** Operations per second over the whole pass. */
    public double opsPerSecond() {
      return ops / seconds;
    }
  }

  /**
   * Runs {@code op} on {@code threads} workers for {@code seconds}, prints one line and returns the figures.
   *
   * @throws IllegalStateException when an operation failed (the first failure is the cause)
   */
  public static Result run(String name, int threads, int seconds, PgCounters counters, Op op) throws Exception {
    PgCounters.Mark before = counters.mark();
    long pid = ProcessHandle.current().pid();
    long client0 = AtomicModeBench.Cpu.processTicks(pid);
    long db0 = AtomicModeBench.Cpu.ticksOf("postgres");
    long backends0 = ticksOf(before.backends());
    long start = System.nanoTime();
    long deadline = start + seconds * 1_000_000_000L;
    ExecutorService workers = Executors.newFixedThreadPool(threads);
    List<Future<Long>> counts = new ArrayList<>(threads);
    try {
      for (int t = 0; t < threads; t++) {
        counts.add(workers.submit(() -> {
          long n = 0;
          while (System.nanoTime() < deadline) {
            op.run();
            n++;
          }
          return n;
        }));
      }
      long ops = 0;
      for (Future<Long> count : counts) {
        try {
          ops += count.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException(name + " failed: " + e.getCause(), e.getCause());
        }
      }
      double elapsed = (System.nanoTime() - start) / 1e9;
      double clientUs = AtomicModeBench.Cpu.ticksToMicros(AtomicModeBench.Cpu.processTicks(pid) - client0) / ops;
      double dbUs = AtomicModeBench.Cpu.ticksToMicros(AtomicModeBench.Cpu.ticksOf("postgres") - db0) / ops;
      double backendUs = AtomicModeBench.Cpu.ticksToMicros(ticksOf(before.backends()) - backends0) / ops;
      PgCounters.Mark after = counters.mark();
      PgCounters.Usage used = PgCounters.between(before, after);
      Result r = new Result(name, ops, elapsed, clientUs, dbUs, backendUs, used.commitsPer(ops),
          used.walBytesPer(ops), before.walBytes(), after.walBytes());
      System.out.printf(Locale.ROOT, "%-40s %8.0f ops/s  client %6.1f us/op  db %6.1f us/op  backends %6.1f us/op"
          + "  %5.2f commits/op  %7.0f WAL B/op%n", name, r.opsPerSecond(), clientUs, dbUs, backendUs,
          r.commitsPerOp(), r.walBytesPerOp());
      return r;
    } finally {
      workers.shutdownNow();
    }
  }

  private static long ticksOf(List<Long> pids) {
    return pids.stream().mapToLong(AtomicModeBench.Cpu::processTicks).sum();
  }

  /** The median of {@code values} (the mean of the middle two for an even count); NaN for none. */
  public static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
