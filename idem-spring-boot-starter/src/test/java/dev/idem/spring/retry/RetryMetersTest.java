package dev.idem.spring.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.retry.Backoff;
import dev.idem.retry.CircuitBreaker;
import dev.idem.retry.CircuitOpenException;
import dev.idem.retry.Retry;
import dev.idem.retry.RetryBudget;
import dev.idem.retry.RetryBudgetExhaustedException;
import dev.idem.retry.RetryExhaustedException;
import dev.idem.retry.RetryPolicy;
import dev.idem.test.MutableClock;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@link RetryMeters} on real {@link Retry} runs and a real {@link CircuitBreaker}, on a simple registry. */
class RetryMetersTest {
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final RetryMeters meters = new RetryMeters(registry, "payments");
  private final MutableClock clock = MutableClock.startingNow();

  /** An operation that throws or returns the scripted outcomes in order. */
  private static final class Script {
    private final Deque<Object> outcomes;

    Script(Object... outcomes) {
      this.outcomes = new ArrayDeque<>(List.of(outcomes));
    }

    Object next() throws Exception {
      Object next = outcomes.removeFirst();
      if (next instanceof Exception) {
        throw (Exception) next;
      }
      return next;
    }
  }

  private <R> Retry<R> retry(String name, RetryPolicy<R> policy) {
    return Retry.of(policy).withName(name).withListener(meters).withClock(clock).withSleeper(clock::advance);
  }

  private static RetryPolicy.Builder<Object> policy(int attempts) {
    return RetryPolicy.builder().maxAttempts(attempts).backoff(Backoff.exponential(Duration.ofMillis(20),
        Duration.ofMillis(200), dev.idem.retry.Jitter.NONE)).noDeadline();
  }

  private double count(String name, String... tags) {
    var counter = registry.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  private double gauge(String name, String... tags) {
    return registry.get(name).tags(tags).gauge().value();
  }

  @Test
  void aRetrysFirstAttemptRegistersEveryOutcomeAtZeroSoThatAlertsSeeZeroRatherThanNoData() throws Exception {
    Retry<Object> retry = retry("ledger", policy(3).retryOn(IOException.class).build());

    retry.call(new Script("ok")::next);

    Set<String> reasons = registry.find(RetryMeters.OUTCOME).tags("retry", "ledger").counters().stream()
        .map(c -> c.getId().getTag("outcome") + "/" + c.getId().getTag("reason")).collect(Collectors.toSet());
    assertThat(reasons).containsExactlyInAnyOrder("success/first_attempt", "success/retried", "failure/exhausted",
        "failure/deadline", "failure/budget", "failure/circuit_open", "failure/not_retryable", "failure/interrupted");
    assertThat(count(RetryMeters.OUTCOME, "retry", "ledger", "reason", "exhausted")).isZero();
    assertThat(count(RetryMeters.BUDGET_REFUSED, "retry", "ledger")).isZero();
    assertThat(registry.find(RetryMeters.BUDGET_REFUSED).tags("retry", "ledger").counter()).isNotNull();
  }

  @Test
  void aCallThatSucceedsAfterRetriesCountsItsAttemptsAndRetriesByCause() {
    Retry<Object> retry = retry("provider", policy(3).retryOn(IOException.class).build());
    Script script = new Script(new IOException("down"), new IOException("still down"), "ok");

    Object result = retry.call(script::next);

    assertThat(result).isEqualTo("ok");
    assertThat(count(RetryMeters.ATTEMPTS, "instance", "payments", "retry", "provider")).isEqualTo(3);
    assertThat(count(RetryMeters.RETRIES, "retry", "provider", "cause", "IOException")).isEqualTo(2);
    assertThat(count(RetryMeters.OUTCOME, "retry", "provider", "outcome", "success", "reason", "retried"))
        .isEqualTo(1);
    assertThat(count(RetryMeters.OUTCOME, "retry", "provider", "outcome", "success", "reason", "first_attempt"))
        .isZero();
  }

  @Test
  void aRetryableResultIsCountedAsCauseResultAndAFirstAttemptSuccessApart() {
    Retry<Integer> retry = retry("gateway", RetryPolicy.<Integer>builder().maxAttempts(3)
        .retryOnResult(status -> status == 503).noDeadline().build());
    Deque<Integer> statuses = new ArrayDeque<>(List.of(503, 200, 201));

    retry.call(statuses::removeFirst);
    retry.call(statuses::removeFirst);

    assertThat(count(RetryMeters.RETRIES, "retry", "gateway", "cause", RetryMeters.RESULT_CAUSE)).isEqualTo(1);
    assertThat(count(RetryMeters.ATTEMPTS, "retry", "gateway")).isEqualTo(3);
    assertThat(count(RetryMeters.OUTCOME, "retry", "gateway", "outcome", "success", "reason", "retried"))
        .isEqualTo(1);
    assertThat(count(RetryMeters.OUTCOME, "retry", "gateway", "outcome", "success", "reason", "first_attempt"))
        .isEqualTo(1);
  }

  @Test
  void failuresAreCountedByReason() {
    Retry<Object> retry = retry("provider", policy(2).retryOn(IOException.class).build());

    assertThatThrownBy(() -> retry.call(new Script(new IOException("a"), new IOException("b"))::next))
        .isInstanceOf(RetryExhaustedException.class);
    assertThatThrownBy(() -> retry.call(new Script(new IllegalArgumentException("declined"))::next))
        .isInstanceOf(IllegalArgumentException.class);
    try {
      assertThatThrownBy(() -> retry.withSleeper(d -> {
        throw new InterruptedException();
      }).call(new Script(new IOException("a"), "never")::next)).hasCauseInstanceOf(InterruptedException.class);
    } finally {
      // the retry sets the interrupt flag again for its caller; clear it for the next test
      Thread.interrupted();
    }

    assertThat(count(RetryMeters.OUTCOME, "retry", "provider", "outcome", "failure", "reason", "exhausted"))
        .isEqualTo(1);
    assertThat(count(RetryMeters.OUTCOME, "retry", "provider", "outcome", "failure", "reason", "not_retryable"))
        .isEqualTo(1);
    assertThat(count(RetryMeters.OUTCOME, "retry", "provider", "outcome", "failure", "reason", "interrupted"))
        .isEqualTo(1);
    assertThat(count(RetryMeters.RETRIES, "retry", "provider", "cause", "IOException")).isEqualTo(2);
  }

  @Test
  void aRetryTheBudgetRefusesIsCounted() {
    // two tokens: the first failure leaves one, and retries need more than half
    Retry<Object> retry = retry("budgeted", policy(5).retryOn(IOException.class).build())
        .withBudget(RetryBudget.tokenBucket(2, 0.1));

    assertThatThrownBy(() -> retry.call(new Script(new IOException("down"), "ok")::next))
        .isInstanceOf(RetryBudgetExhaustedException.class);

    assertThat(count(RetryMeters.BUDGET_REFUSED, "instance", "payments", "retry", "budgeted")).isEqualTo(1);
    assertThat(count(RetryMeters.OUTCOME, "retry", "budgeted", "outcome", "failure", "reason", "budget"))
        .isEqualTo(1);
    assertThat(count(RetryMeters.RETRIES, "retry", "budgeted")).isZero();
  }

  @Test
  void theCircuitGaugeFollowsTheBreakerAndRefusedAttemptsAreCounted() {
    CircuitBreaker breaker = meters.bind(CircuitBreaker.builder().name("provider").countWindow(2).minimumCalls(2)
        .failureRateThreshold(50).openDuration(Duration.ofMinutes(1)).halfOpenProbes(1).clock(clock).build());
    Retry<Object> retry = retry("provider", policy(3).retryOn(IOException.class).build())
        .withCircuitBreaker(breaker);
    double closed = gauge(RetryMeters.CIRCUIT_STATE, "instance", "payments", "circuit", "provider");

    assertThatThrownBy(() -> retry.call(new Script(new IOException("a"), new IOException("b"), "ok")::next))
        .isInstanceOf(CircuitOpenException.class);
    double open = gauge(RetryMeters.CIRCUIT_STATE, "circuit", "provider");
    clock.advance(Duration.ofMinutes(2));
    double halfOpen = gauge(RetryMeters.CIRCUIT_STATE, "circuit", "provider");
    retry.call(new Script("ok")::next);
    double closedAgain = gauge(RetryMeters.CIRCUIT_STATE, "circuit", "provider");

    assertThat(closed).isZero();
    assertThat(open).isEqualTo(2);
    assertThat(halfOpen).isEqualTo(1);
    assertThat(closedAgain).isZero();
    assertThat(count(RetryMeters.CIRCUIT_REFUSED, "instance", "payments", "retry", "provider")).isEqualTo(1);
    assertThat(count(RetryMeters.OUTCOME, "retry", "provider", "outcome", "failure", "reason", "circuit_open"))
        .isEqualTo(1);
    assertThat(count(RetryMeters.ATTEMPTS, "retry", "provider")).as("two before it opened, one probe")
        .isEqualTo(3);
  }

  @Test
  void causesBeyondTheCapCountAsOther() {
    RetryMeters capped = new RetryMeters(registry, "payments", 2);
    Retry<Object> retry = Retry.of(policy(4).retryOn(Exception.class).build()).withName("capped")
        .withListener(capped).withSleeper(clock::advance);

    retry.call(new Script(new IOException("a"), new TimeoutException("b"),
        new UncheckedIOException(new IOException("c")), "ok")::next);

    assertThat(count(RetryMeters.RETRIES, "retry", "capped", "cause", "IOException")).isEqualTo(1);
    assertThat(count(RetryMeters.RETRIES, "retry", "capped", "cause", "TimeoutException")).isEqualTo(1);
    assertThat(count(RetryMeters.RETRIES, "retry", "capped", "cause", RetryMeters.OTHER)).isEqualTo(1);
  }

  @Test
  void everyMeterCarriesTheInstanceAndOnlyBoundedTags() {
    Retry<Object> retry = retry("provider", policy(2).retryOn(IOException.class).build());
    meters.bind(CircuitBreaker.builder().name("provider").clock(clock).build());
    retry.call(new Script(new IOException("secret-in-the-message sk_live_123"), "ok")::next);

    Set<String> keys = registry.getMeters().stream().flatMap(m -> m.getId().getTags().stream())
        .map(Tag::getKey).collect(Collectors.toSet());
    List<String> values = registry.getMeters().stream().flatMap(m -> m.getId().getTags().stream())
        .map(Tag::getValue).toList();

    assertThat(registry.getMeters()).isNotEmpty()
        .allMatch(m -> "payments".equals(m.getId().getTag("instance")), "tagged instance=payments");
    assertThat(keys).isSubsetOf("instance", "retry", "cause", "outcome", "reason", "circuit");
    assertThat(values).noneMatch(v -> v.contains("sk_live") || v.contains("secret"));
    assertThat(registry.getMeters().stream().map(Meter::getId).map(Meter.Id::getName))
        .contains(RetryMeters.ATTEMPTS, RetryMeters.RETRIES, RetryMeters.OUTCOME, RetryMeters.BUDGET_REFUSED,
            RetryMeters.CIRCUIT_REFUSED, RetryMeters.HEDGES, RetryMeters.CIRCUIT_STATE);
  }
}
