package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.retry.CircuitBreaker.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest {
  private final MutableClock clock = new MutableClock();

  private CircuitBreaker.Builder countBased() {
    return CircuitBreaker.builder()
        .name("payments")
        .countWindow(10)
        .minimumCalls(4)
        .failureRateThreshold(50)
        .openDuration(Duration.ofSeconds(10), 2.0, Duration.ofSeconds(30))
        .halfOpenProbes(2)
        .clock(clock);
  }

  private static void calls(CircuitBreaker breaker, int successes, int failures) {
    for (int i = 0; i < successes; i++) {
      assertThat(breaker.tryAcquirePermission()).isTrue();
      breaker.onSuccess();
    }
    for (int i = 0; i < failures; i++) {
      assertThat(breaker.tryAcquirePermission()).isTrue();
      breaker.onFailure();
    }
  }

  @Test
  void staysClosedBelowTheMinimumNumberOfCalls() {
    CircuitBreaker breaker = countBased().build();

    calls(breaker, 0, 3);

    assertThat(breaker.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void opensAtTheThresholdAfterTheMinimumNumberOfCalls() {
    CircuitBreaker breaker = countBased().build();

    calls(breaker, 2, 1);
    State belowThreshold = breaker.state();
    calls(breaker, 0, 1);

    assertThat(belowThreshold).isEqualTo(State.CLOSED);
    assertThat(breaker.state()).isEqualTo(State.OPEN);
    assertThat(breaker.tryAcquirePermission()).isFalse();
  }

  @Test
  void countWindowForgetsCallsOlderThanTheWindow() {
    CircuitBreaker breaker = countBased().build();

    calls(breaker, 0, 3);
    calls(breaker, 10, 0);
    calls(breaker, 0, 4);

    assertThat(breaker.state()).isEqualTo(State.CLOSED);
    calls(breaker, 0, 1);
    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void openGoesHalfOpenAfterTheOpenDuration() {
    CircuitBreaker breaker = countBased().build();
    calls(breaker, 0, 4);

    clock.advance(Duration.ofMillis(9_999));
    State justBefore = breaker.state();
    clock.advance(Duration.ofMillis(1));

    assertThat(justBefore).isEqualTo(State.OPEN);
    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void halfOpenLetsThroughTheProbesAndClosesWhenTheyAllSucceed() {
    CircuitBreaker breaker = countBased().build();
    calls(breaker, 0, 4);
    clock.advance(Duration.ofSeconds(10));

    boolean first = breaker.tryAcquirePermission();
    boolean second = breaker.tryAcquirePermission();
    boolean third = breaker.tryAcquirePermission();
    breaker.onSuccess();
    State afterOne = breaker.state();
    breaker.onSuccess();

    assertThat(first).isTrue();
    assertThat(second).isTrue();
    assertThat(third).isFalse();
    assertThat(afterOne).isEqualTo(State.HALF_OPEN);
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
    calls(breaker, 0, 3);
    assertThat(breaker.state()).as("window was reset on closing").isEqualTo(State.CLOSED);
  }

  @Test
  void failedProbeReopensForALongerDurationUpToTheMaximum() {
    CircuitBreaker breaker = countBased().build();
    calls(breaker, 0, 4);

    clock.advance(Duration.ofSeconds(10));
    breaker.tryAcquirePermission();
    breaker.onFailure();
    State afterFailedProbe = breaker.state();
    clock.advance(Duration.ofMillis(19_999));
    State before20s = breaker.state();
    clock.advance(Duration.ofMillis(1));
    State at20s = breaker.state();

    assertThat(afterFailedProbe).isEqualTo(State.OPEN);
    assertThat(before20s).isEqualTo(State.OPEN);
    assertThat(at20s).isEqualTo(State.HALF_OPEN);

    breaker.tryAcquirePermission();
    breaker.onFailure();
    clock.advance(Duration.ofMillis(29_999));
    assertThat(breaker.state()).as("40 s capped to 30 s").isEqualTo(State.OPEN);
    clock.advance(Duration.ofMillis(1));
    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void openDurationResetsAfterClosing() {
    CircuitBreaker breaker = countBased().build();
    calls(breaker, 0, 4);
    clock.advance(Duration.ofSeconds(10));
    breaker.tryAcquirePermission();
    breaker.onFailure();
    clock.advance(Duration.ofSeconds(20));
    breaker.tryAcquirePermission();
    breaker.onSuccess();
    breaker.tryAcquirePermission();
    breaker.onSuccess();

    calls(breaker, 0, 4);
    clock.advance(Duration.ofSeconds(10));

    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void timeWindowCountsOnlyRecentCalls() {
    CircuitBreaker breaker = CircuitBreaker.builder()
        .timeWindow(Duration.ofSeconds(10))
        .minimumCalls(4)
        .failureRateThreshold(50)
        .openDuration(Duration.ofSeconds(5))
        .clock(clock)
        .build();

    calls(breaker, 0, 3);
    clock.advance(Duration.ofSeconds(11));
    calls(breaker, 1, 2);
    State oldFailuresForgotten = breaker.state();
    calls(breaker, 0, 1);

    assertThat(oldFailuresForgotten).isEqualTo(State.CLOSED);
    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void validationNamesParameterAndValue() {
    assertThatThrownBy(() -> CircuitBreaker.builder().failureRateThreshold(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("failureRateThreshold")
        .hasMessageContaining("0.0");
    assertThatThrownBy(() -> CircuitBreaker.builder().countWindow(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("countWindow calls must be >= 1, was 0");
    assertThatThrownBy(() -> CircuitBreaker.builder().countWindow(5).minimumCalls(6).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minimumCalls");
    assertThatThrownBy(() -> CircuitBreaker.builder().openDuration(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiplier").hasMessageContaining("0.5");
  }
}
