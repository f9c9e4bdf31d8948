package dev.idem.servlet.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.test.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import dev.idem.servlet.budget.RetryShareWindow.Snapshot;
import org.junit.jupiter.api.Test;

/** The retry-share window and the attempt header, on a manual clock. */
class RetryBudgetWindowTest {
  /** A whole second, so that buckets of one second start exactly at the clock's start. */
  private static final Instant START = Instant.ofEpochSecond(1_800_000_000L);

  private final MutableClock clock = new MutableClock(START);

  private RetryShareWindow window(double share, int minRequests) {
    return new RetryShareWindow(share, minRequests, TimeUnit.SECONDS.toNanos(10),
        () -> TimeUnit.MILLISECONDS.toNanos(clock.millis()));
  }

  @Test
  void theWindowFollowsTheNanoSourceFromAnyOrigin() {
    // System.nanoTime() has an arbitrary origin, negative as often as not: start just below zero and cross it
    AtomicLong nanos = new AtomicLong(-TimeUnit.SECONDS.toNanos(3));
    RetryShareWindow w = new RetryShareWindow(0.2, 0, TimeUnit.SECONDS.toNanos(10), nanos::get);
    firstAttempts(w, 8);
    boolean ninth = w.tryAdmitRetry(); // 1 of 9
    boolean tenth = w.tryAdmitRetry(); // 2 of 10
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(5)); // t = +2 s, across the source's zero

    boolean past = w.tryAdmitRetry(); // 3 of 11: past the share
    Snapshot during = w.snapshot();
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(10)); // a whole window later: every bucket has left it
    Snapshot emptied = w.snapshot();
    firstAttempts(w, 4);
    boolean later = w.tryAdmitRetry(); // 1 of 5

    assertThat(ninth).isTrue();
    assertThat(tenth).isTrue();
    assertThat(past).as("the budget still refuses").isFalse();
    assertThat(during).isEqualTo(new RetryShareWindow.Snapshot(10, 2, 1));
    assertThat(emptied).isEqualTo(new RetryShareWindow.Snapshot(0, 0, 0));
    assertThat(later).isTrue();
    assertThat(w.snapshot()).isEqualTo(new RetryShareWindow.Snapshot(5, 1, 0));
  }

  private static void firstAttempts(RetryShareWindow w, int n) {
    for (int i = 0; i < n; i++) {
      w.firstAttempt();
    }
  }

  @Test
  void retryIsRefusedExactlyWhenAdmittingItWouldPutRetriesPastTheShare() {
    RetryShareWindow w = window(0.2, 0);
    firstAttempts(w, 8);

    boolean ninth = w.tryAdmitRetry();   // 1 of 9 = 11 %
    boolean tenth = w.tryAdmitRetry();   // 2 of 10 = 20 %: at the share, admitted
    boolean eleventh = w.tryAdmitRetry(); // 3 of 11 = 27 %: past it, refused
    firstAttempts(w, 5);
    boolean afterMoreFirstAttempts = w.tryAdmitRetry(); // 3 of 16 = 19 %

    assertThat(ninth).isTrue();
    assertThat(tenth).isTrue();
    assertThat(eleventh).isFalse();
    assertThat(afterMoreFirstAttempts).isTrue();
    assertThat(w.snapshot()).isEqualTo(new RetryShareWindow.Snapshot(16, 3, 1));
    assertThat(w.snapshot().retryShare()).isEqualTo(3.0 / 16);
    assertThat(w.admittedTotal()).isEqualTo(3);
    assertThat(w.shedTotal()).isEqualTo(1);
  }

  @Test
  void refusedRetriesCountNeitherAsRetriesNorAsRequests() {
    RetryShareWindow w = window(0.2, 0);
    firstAttempts(w, 4);
    assertThat(w.tryAdmitRetry()).isTrue(); // 1 of 5

    int refused = 0;
    for (int i = 0; i < 100; i++) {
      refused += w.tryAdmitRetry() ? 0 : 1;
    }

    assertThat(refused).as("a storm of retries does not make room for itself").isEqualTo(100);
    assertThat(w.snapshot()).isEqualTo(new RetryShareWindow.Snapshot(5, 1, 100));
    assertThat(w.snapshot().retryShare()).isEqualTo(0.2);
  }

  @Test
  void firstAttemptsAreCountedWhileRetriesAreShedAndReopenTheBudget() {
    RetryShareWindow w = window(0.25, 0);
    assertThat(w.tryAdmitRetry()).isFalse();

    firstAttempts(w, 3);

    assertThat(w.tryAdmitRetry()).as("1 of 4 = 25 %").isTrue();
    assertThat(w.tryAdmitRetry()).isFalse();
    assertThat(w.snapshot().requests()).isEqualTo(4);
  }

  @Test
  void shareFollowsTheSlidingWindowAcrossBucketRollover() {
    RetryShareWindow w = window(0.2, 0);
    firstAttempts(w, 10);
    assertThat(w.tryAdmitRetry()).isTrue();
    assertThat(w.tryAdmitRetry()).isTrue(); // 2 of 12 at t = 0

    clock.advance(Duration.ofSeconds(5));
    firstAttempts(w, 8);
    RetryShareWindow.Snapshot atFive = w.snapshot();
    clock.advance(Duration.ofMillis(4_999)); // t = 9.999 s: the first bucket is still in the window
    RetryShareWindow.Snapshot justBeforeTen = w.snapshot();
    clock.advance(Duration.ofMillis(1)); // t = 10 s: it has left, its slot is the current one again
    RetryShareWindow.Snapshot atTen = w.snapshot();
    boolean retryAtTen = w.tryAdmitRetry(); // 1 of 9 = 11 %
    RetryShareWindow.Snapshot afterRetryAtTen = w.snapshot();
    clock.advance(Duration.ofSeconds(30));
    RetryShareWindow.Snapshot quiet = w.snapshot();

    assertThat(atFive).isEqualTo(new RetryShareWindow.Snapshot(20, 2, 0));
    assertThat(justBeforeTen).isEqualTo(atFive);
    assertThat(atTen).isEqualTo(new RetryShareWindow.Snapshot(8, 0, 0));
    assertThat(retryAtTen).isTrue();
    assertThat(afterRetryAtTen).as("the reused slot starts from zero").isEqualTo(new RetryShareWindow.Snapshot(9, 1, 0));
    assertThat(quiet).isEqualTo(new RetryShareWindow.Snapshot(0, 0, 0));
    assertThat(quiet.retryShare()).isZero();
  }

  @Test
  void oldRetriesLeavingTheWindowMakeRoomForNewOnes() {
    RetryShareWindow w = window(0.5, 0);
    firstAttempts(w, 1);
    assertThat(w.tryAdmitRetry()).isTrue(); // 1 of 2
    clock.advance(Duration.ofSeconds(3));
    firstAttempts(w, 1);
    assertThat(w.tryAdmitRetry()).isTrue(); // 2 of 4
    assertThat(w.tryAdmitRetry()).isFalse(); // 3 of 5

    clock.advance(Duration.ofSeconds(7)); // t = 10 s: the first second (1 request, 1 retry) has left

    assertThat(w.snapshot()).isEqualTo(new RetryShareWindow.Snapshot(2, 1, 1));
    assertThat(w.tryAdmitRetry()).as("2 of 3 is past 50 %").isFalse();
    firstAttempts(w, 1);
    assertThat(w.tryAdmitRetry()).as("2 of 4").isTrue();
  }

  @Test
  void nothingIsRefusedBelowMinRequests() {
    RetryShareWindow w = window(0.2, 20);
    w.firstAttempt();

    List<Boolean> decisions = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      decisions.add(w.tryAdmitRetry());
    }

    assertThat(decisions.subList(0, 19)).as("requests 2..20 of a quiet window: under 20 served before each")
        .containsOnly(true);
    assertThat(decisions.get(19)).as("the 21st request: 20 of 21 are retries").isFalse();
    assertThat(w.snapshot()).isEqualTo(new RetryShareWindow.Snapshot(20, 19, 1));
  }

  @Test
  void quietServiceAdmitsItsFirstRetryWithTheDefaultMinRequests() {
    RetryShareWindow w = window(RetryBudgetFilter.DEFAULT_MAX_RETRY_SHARE, RetryBudgetFilter.DEFAULT_MIN_REQUESTS);
    w.firstAttempt();

    assertThat(w.tryAdmitRetry()).isTrue();
  }

  @Test
  void zeroShareRefusesEveryRetryAndOneRefusesNone() {
    RetryShareWindow none = window(0.0, 0);
    RetryShareWindow all = window(1.0, 0);
    firstAttempts(none, 100);

    boolean noneAdmits = none.tryAdmitRetry();
    boolean allAdmits = true;
    for (int i = 0; i < 100; i++) {
      allAdmits &= all.tryAdmitRetry();
    }

    assertThat(noneAdmits).isFalse();
    assertThat(allAdmits).isTrue();
  }

  @Test
  void concurrentRetriesNeverPushTheShareAboveTheLimit() throws Exception {
    int threads = 8;
    int perThread = 5_000;
    double share = 0.2;
    for (int round = 0; round < 20; round++) {
      RetryShareWindow w = window(share, 0);
      AtomicLong admitted = new AtomicLong();
      AtomicLong refused = new AtomicLong();
      CyclicBarrier start = new CyclicBarrier(threads);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int seed = t;
          done.add(pool.submit(() -> {
            start.await(10, TimeUnit.SECONDS);
            for (int i = 0; i < perThread; i++) {
              if ((i + seed) % 3 == 0) {
                w.firstAttempt();
              } else if (w.tryAdmitRetry()) {
                admitted.incrementAndGet();
              } else {
                refused.incrementAndGet();
              }
            }
            return null;
          }));
        }
        for (Future<?> f : done) {
          f.get(60, TimeUnit.SECONDS);
        }
      } finally {
        pool.shutdownNow();
      }

      RetryShareWindow.Snapshot s = w.snapshot();
      assertThat(s.retries()).isEqualTo(admitted.get());
      assertThat(s.shed()).isEqualTo(refused.get());
      assertThat(s.retries() + s.shed()).isEqualTo(threads * perThread - s.requests() + s.retries());
      assertThat((double) s.retries()).as("round %d: %s", round, s).isLessThanOrEqualTo(share * s.requests());
      assertThat(s.retries()).as("the budget is used, not refused wholesale")
          .isGreaterThanOrEqualTo((long) (share * s.requests()) - 3L * threads);
    }
  }

  @Test
  void attemptHeaderValues() {
    assertThat(RetryBudgetFilter.attempt(null)).isEqualTo(1);
    assertThat(RetryBudgetFilter.attempt("1")).isEqualTo(1);
    assertThat(RetryBudgetFilter.attempt("2")).isEqualTo(2);
    assertThat(RetryBudgetFilter.attempt(" 4 ")).isEqualTo(4);
    assertThat(RetryBudgetFilter.attempt("007")).isEqualTo(7);
    assertThat(RetryBudgetFilter.attempt("1000")).isEqualTo(1000);
    for (String malformed : List.of("", " ", "0", "-3", "+2", "2.0", "two", "2, 3", "0x10", "1e3", "1001", "9999999999",
        "٣")) {
      assertThat(RetryBudgetFilter.attempt(malformed)).as("'%s' counts as a first attempt", malformed).isEqualTo(1);
    }
  }

  @Test
  void builderNamesTheBadParameter() {
    assertThatThrownBy(() -> RetryBudgetFilter.builder().maxRetryShare(1.5))
        .hasMessageContaining("maxRetryShare").hasMessageContaining("1.5");
    assertThatThrownBy(() -> RetryBudgetFilter.builder().maxRetryShare(Double.NaN)).hasMessageContaining("NaN");
    assertThatThrownBy(() -> RetryBudgetFilter.builder().window(Duration.ofMillis(10)))
        .hasMessageContaining("window");
    assertThatThrownBy(() -> RetryBudgetFilter.builder().minRequests(-1)).hasMessageContaining("minRequests");
    assertThatThrownBy(() -> RetryBudgetFilter.builder().retryAfter(Duration.ZERO))
        .hasMessageContaining("retryAfter");
    assertThatThrownBy(() -> RetryBudgetFilter.builder().attemptHeader("Bad Header"))
        .hasMessageContaining("attemptHeader");
    assertThatThrownBy(() -> RetryBudgetFilter.builder().pathPrefixes("payments"))
        .hasMessageContaining("path prefix").hasMessageContaining("payments");
  }

  @Test
  void retryAfterDefaultsToTheWindowRoundedUpToSeconds() {
    assertThat(RetryBudgetFilter.builder().build().retryAfterSeconds()).isEqualTo(10);
    assertThat(RetryBudgetFilter.builder().window(Duration.ofMillis(1_500)).build().retryAfterSeconds()).isEqualTo(2);
    assertThat(RetryBudgetFilter.builder().retryAfter(Duration.ofSeconds(3)).build().retryAfterSeconds())
        .isEqualTo(3);
  }
}
