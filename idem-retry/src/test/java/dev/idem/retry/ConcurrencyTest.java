package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Race tests: many iterations, real threads, no sleeping. */
class ConcurrencyTest {
  private static final int THREADS = 8;
  private final ExecutorService pool = Executors.newFixedThreadPool(THREADS);
  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);

  @AfterEach
  void stop() {
    pool.shutdownNow();
    scheduler.shutdownNow();
  }

  /** Runs {@code task} on every thread at once; returns when all are done. */
  private void race(Runnable task) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<CompletableFuture<Void>> done = new CopyOnWriteArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      done.add(CompletableFuture.runAsync(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        task.run();
      }, pool));
    }
    go.countDown();
    CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
  }

  @Test
  void halfOpenNeverLetsThroughMoreThanTheProbes() throws Exception {
    for (int i = 0; i < 300; i++) {
      MutableClock clock = new MutableClock();
      CircuitBreaker breaker = CircuitBreaker.builder().countWindow(1).minimumCalls(1).halfOpenProbes(3)
          .openDuration(Duration.ofSeconds(1)).clock(clock).build();
      breaker.onFailure();
      clock.advance(Duration.ofSeconds(1));
      AtomicInteger granted = new AtomicInteger();

      race(() -> {
        for (int k = 0; k < 10; k++) {
          if (breaker.tryAcquirePermission()) {
            granted.incrementAndGet();
          }
        }
      });

      assertThat(granted).hasValue(3);
    }
  }

  @Test
  void ratioBudgetNeverGrantsMoreThanItsRatio() throws Exception {
    for (int i = 0; i < 300; i++) {
      RetryBudget budget = RetryBudget.ratio(0.5, 0, Duration.ofSeconds(10), new MutableClock());
      for (int r = 0; r < 100; r++) {
        budget.onRequest();
      }
      AtomicInteger granted = new AtomicInteger();

      race(() -> {
        for (int k = 0; k < 20; k++) {
          if (budget.tryAcquireRetry()) {
            granted.incrementAndGet();
          }
        }
      });

      assertThat(granted).hasValue(50);
    }
  }

  @Test
  void theCopyThatLosesTheHedgingRaceIsAlwaysCancelled() throws Exception {
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().noDeadline().build())
        .withHedging(Duration.ZERO);
    for (int i = 0; i < 1000; i++) {
      int winner = i % 2 + 1;
      List<CompletableFuture<String>> copies = new CopyOnWriteArrayList<>();
      AtomicInteger n = new AtomicInteger();

      CompletableFuture<String> result = retry.callAsync(() -> {
        int copy = n.incrementAndGet();
        CompletableFuture<String> future = copy == winner
            ? CompletableFuture.supplyAsync(() -> "copy" + copy, pool)
            : new CompletableFuture<>();
        copies.add(future);
        return future;
      }, scheduler);
      String value = result.get(30, TimeUnit.SECONDS);

      assertThat(value).isEqualTo("copy" + winner);
      assertThat(copies).hasSizeBetween(winner, 2);
      for (CompletableFuture<String> copy : copies) {
        if (copy.isCancelled() || !copy.isDone()) {
          assertThat(copy.handle((v, t) -> t).get(30, TimeUnit.SECONDS))
              .as("the losing copy is cancelled").isInstanceOf(java.util.concurrent.CancellationException.class);
        }
      }
    }
  }

  @Test
  void tokenBucketSharedByConcurrentCallsStaysWithinItsBounds() throws Exception {
    RetryBudget budget = RetryBudget.tokenBucket(10, 0.1);
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().backoff(Backoff.none()).build())
        .withBudget(budget).withSleeper(d -> { });
    AtomicInteger attempts = new AtomicInteger();

    race(() -> {
      for (int k = 0; k < 200; k++) {
        try {
          retry.call(() -> {
            attempts.incrementAndGet();
            throw new java.io.IOException("503");
          });
        } catch (RetryException expected) {
          // exhausted or refused
        }
      }
    });

    assertThat(budget.remaining()).isBetween(0.0, 10.0);
    assertThat(attempts.get()).isLessThanOrEqualTo(THREADS * 200 + 5 + THREADS);
  }
}
