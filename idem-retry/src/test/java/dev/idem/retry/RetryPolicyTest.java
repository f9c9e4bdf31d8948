package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RetryPolicyTest {

  /** The default classification (docs/architecture.md, "Retry rules"): connection failures and timeouts only. */
  static Stream<Arguments> defaultClassification() {
    return Stream.of(
        Arguments.of(new ConnectException("connection refused"), true),
        Arguments.of(new SocketTimeoutException("read timed out"), true),
        Arguments.of(new HttpTimeoutException("request timed out"), true),
        Arguments.of(new IOException("connection reset"), true),
        Arguments.of(new UncheckedIOException(new IOException("reset")), true),
        Arguments.of(new TimeoutException("attempt timed out"), true),
        Arguments.of(new IllegalArgumentException("bad request"), false),
        Arguments.of(new IllegalStateException("payload mismatch"), false),
        Arguments.of(new RuntimeException("anything else"), false),
        Arguments.of(new Exception("checked, not I/O"), false),
        Arguments.of(new InterruptedException(), false),
        Arguments.of(new OutOfMemoryError(), false),
        Arguments.of(new StackOverflowError(), false));
  }

  @ParameterizedTest(name = "{0} -> retry {1}")
  @MethodSource("defaultClassification")
  void defaultClassificationRetriesConnectionFailuresAndTimeoutsOnly(Throwable failure, boolean retry) {
    RetryPolicy<Object> policy = RetryPolicy.ofDefaults();

    assertThat(policy.isRetryable(failure)).isEqualTo(retry);
  }

  static Stream<Arguments> configuredClassification() {
    return Stream.of(
        Arguments.of(new IOException("reset"), true),
        Arguments.of(new FileNotFoundException("abort wins over retryOn"), false),
        Arguments.of(new IllegalStateException("retryIf 503"), true),
        Arguments.of(new IllegalStateException("retryIf 404"), false),
        Arguments.of(new TimeoutException("not listed once retryOn is set"), false),
        Arguments.of(new Error("503 but an Error"), false));
  }

  @ParameterizedTest(name = "{0} -> retry {1}")
  @MethodSource("configuredClassification")
  void configuredClassificationAppliesAbortThenRetryOnThenRetryIf(Throwable failure, boolean retry) {
    RetryPolicy<Object> policy = RetryPolicy.builder()
        .retryOn(IOException.class)
        .abortOn(FileNotFoundException.class)
        .retryIf(t -> String.valueOf(t.getMessage()).contains("503"))
        .build();

    assertThat(policy.isRetryable(failure)).isEqualTo(retry);
  }

  static Stream<Arguments> resultClassification() {
    return Stream.of(
        Arguments.of(200, false), Arguments.of(201, false), Arguments.of(400, false), Arguments.of(404, false),
        Arguments.of(408, true), Arguments.of(409, true), Arguments.of(422, false), Arguments.of(429, true),
        Arguments.of(500, true), Arguments.of(501, false), Arguments.of(502, true), Arguments.of(503, true),
        Arguments.of(504, true));
  }

  @ParameterizedTest(name = "status {0} -> retry {1}")
  @MethodSource("resultClassification")
  void resultPredicatesFollowTheStatusTableOfDesignSection5(int status, boolean retry) {
    RetryPolicy<Integer> policy = RetryPolicy.<Integer>builder()
        .retryOnResult(s -> s == 408 || s == 409 || s == 429 || s >= 500)
        .abortOnResult(s -> s == 501)
        .build();

    assertThat(policy.isRetryableResult(status)).isEqualTo(retry);
  }

  @Test
  void withoutResultPredicatesEveryResultIsASuccess() {
    RetryPolicy<Integer> policy = RetryPolicy.ofDefaults();

    assertThat(policy.isRetryableResult(503)).isFalse();
    assertThat(policy.isRetryableResult(null)).isFalse();
  }

  @Test
  void defaultsMatchTheSharedContract() {
    RetryPolicy<Object> policy = RetryPolicy.ofDefaults();

    assertThat(policy.maxAttempts()).isEqualTo(5);
    assertThat(policy.backoff())
        .isEqualTo(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(10), Jitter.FULL));
    assertThat(policy.deadline()).contains(Duration.ofSeconds(30));
    assertThat(policy.attemptTimeout()).isEmpty();
  }

  @Test
  void attemptTimeoutEscalatesByTheFactorUpToTheMaximum() {
    RetryPolicy<Object> policy = RetryPolicy.builder()
        .attemptTimeout(Duration.ofSeconds(2))
        .attemptTimeoutEscalation(1.5, Duration.ofSeconds(5))
        .build();

    assertThat(policy.attemptTimeout(1)).isEqualTo(Duration.ofSeconds(2));
    assertThat(policy.attemptTimeout(2)).isEqualTo(Duration.ofSeconds(3));
    assertThat(policy.attemptTimeout(3)).isEqualTo(Duration.ofMillis(4500));
    assertThat(policy.attemptTimeout(4)).isEqualTo(Duration.ofSeconds(5));
    assertThat(policy.attemptTimeout(200)).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void attemptTimeoutWithoutEscalationStaysTheSame() {
    RetryPolicy<Object> policy = RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(2)).build();

    assertThat(policy.attemptTimeout(7)).isEqualTo(Duration.ofSeconds(2));
    assertThat(RetryPolicy.ofDefaults().attemptTimeout(1)).isEqualTo(Duration.ZERO);
  }

  @Test
  void routedPolicyGovernsItsFailureType() {
    RetryPolicy<Object> forTimeouts = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).build();
    RetryPolicy<Object> policy = RetryPolicy.builder()
        .retryOn(IOException.class)
        .policyFor(TimeoutException.class, forTimeouts)
        .build();

    assertThat(policy.policyFor(new TimeoutException())).isSameAs(forTimeouts);
    assertThat(policy.policyFor(new IOException())).isSameAs(policy);
  }

  @Test
  void toBuilderMakesAVariantAndLeavesTheOriginal() {
    RetryPolicy<Object> original = RetryPolicy.builder().maxAttempts(3).retryOn(IOException.class).build();

    RetryPolicy<Object> variant = original.toBuilder().maxAttempts(7).jitter(Jitter.EQUAL).build();

    assertThat(original.maxAttempts()).isEqualTo(3);
    assertThat(original.backoff().jitter()).isEqualTo(Jitter.FULL);
    assertThat(variant.maxAttempts()).isEqualTo(7);
    assertThat(variant.backoff().jitter()).isEqualTo(Jitter.EQUAL);
    assertThat(variant.isRetryable(new IOException())).isTrue();
    assertThat(variant.isRetryable(new TimeoutException())).isFalse();
  }

  @Test
  void validationIsEagerAndNamesParameterAndValue() {
    assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxAttempts must be >= 1, was 0");
    assertThatThrownBy(() -> RetryPolicy.builder().deadline(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("deadline must be >= 1 ms, was PT-1S");
    assertThatThrownBy(() -> RetryPolicy.builder().attemptTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("attemptTimeout must be > 0, was PT0S");
    assertThatThrownBy(() -> RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(1))
            .attemptTimeoutEscalation(0.5, Duration.ofSeconds(2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("factor").hasMessageContaining("0.5");
    assertThatThrownBy(() -> RetryPolicy.builder().attemptTimeoutEscalation(2, Duration.ofSeconds(2)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("attemptTimeout");
    assertThatThrownBy(() -> RetryPolicy.builder().retryOn())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryOn");
  }
}
