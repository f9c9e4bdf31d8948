package dev.idem.bench.retry;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.idem.retry.Backoff;
import dev.idem.retry.Retry;
import dev.idem.retry.RetryPolicy;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a retry library costs around a call: a direct call, idem-retry, Failsafe and resilience4j, on the success
 * path and with one failure then a success at zero delay. Every library runs the same operation, with 3 attempts and
 * IOException as the retryable failure; the failure is one preallocated exception without a stack trace, so the
 * figures are the libraries' own cost. Run with {@code -prof gc} for B/op.
 *
 * <pre>
 * java -jar idem-bench/target/benchmarks.jar RetryOverheadBenchmark -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RetryOverheadBenchmark {
  private static final IOException FAILURE = new IOException("transient") {
    private static final long serialVersionUID = 1L;

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  };

  private int value = 42;
  private boolean failNext;

  private Callable<Integer> succeeds;
  private Callable<Integer> failsOnce;
  private Retry<Integer> idem;
  private FailsafeExecutor<Integer> failsafe;
  private dev.failsafe.function.CheckedSupplier<Integer> failsafeSucceeds;
  private dev.failsafe.function.CheckedSupplier<Integer> failsafeFailsOnce;
  private Callable<Integer> resilienceSucceeds;
  private Callable<Integer> resilienceFailsOnce;

  @Setup
  public void setUp() {
    succeeds = () -> value;
    failsOnce = () -> {
      failNext = !failNext;
      if (failNext) {
        throw FAILURE;
      }
      return value;
    };
    idem = Retry.of(RetryPolicy.<Integer>builder().maxAttempts(3).backoff(Backoff.none()).noDeadline().build());
    // Failsafe refuses a zero delay; without withDelay it retries at once.
    failsafe = Failsafe.with(dev.failsafe.RetryPolicy.<Integer>builder().withMaxAttempts(3)
        .handle(IOException.class).build());
    failsafeSucceeds = succeeds::call;
    failsafeFailsOnce = failsOnce::call;
    io.github.resilience4j.retry.Retry resilience = io.github.resilience4j.retry.Retry.of("bench",
        RetryConfig.<Integer>custom().maxAttempts(3).waitDuration(Duration.ZERO).retryExceptions(IOException.class)
            .build());
    resilienceSucceeds = io.github.resilience4j.retry.Retry.decorateCallable(resilience, succeeds);
    resilienceFailsOnce = io.github.resilience4j.retry.Retry.decorateCallable(resilience, failsOnce);
  }

  @Benchmark
  public Integer successDirect() throws Exception {
    return succeeds.call();
  }

  @Benchmark
  public Integer successIdemRetry() {
    return idem.call(succeeds);
  }

  @Benchmark
  public Integer successFailsafe() {
    return failsafe.get(failsafeSucceeds);
  }

  @Benchmark
  public Integer successResilience4j() throws Exception {
    return resilienceSucceeds.call();
  }

  @Benchmark
  public Integer oneFailureIdemRetry() {
    failNext = false;
    return idem.call(failsOnce);
  }

  @Benchmark
  public Integer oneFailureFailsafe() {
    failNext = false;
    return failsafe.get(failsafeFailsOnce);
  }

  @Benchmark
  public Integer oneFailureResilience4j() throws Exception {
    failNext = false;
    return resilienceFailsOnce.call();
  }

  /** What one zero-length wait between attempts costs by itself: the floor of a retry library that still sleeps. */
  @Benchmark
  public void sleepZeroAlone() throws InterruptedException {
    Thread.sleep(0);
  }
}
