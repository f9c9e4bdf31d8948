package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {
  /** 2026-01-01T00:00:00Z, a Thursday. */
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

  @Test
  void delaySeconds() {
    assertThat(RetryAfter.parse("120", clock)).contains(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse(" 0 ", clock)).contains(Duration.ZERO);
  }

  @Test
  void negativeDelaySecondsIsZero() {
    assertThat(RetryAfter.parse("-5", clock)).contains(Duration.ZERO);
  }

  @Test
  void hugeDelaySecondsSaturatesInsteadOfFailing() {
    assertThat(RetryAfter.parse("99999999999999999999999", clock)).hasValueSatisfying(d -> {
      assertThat(d).isGreaterThan(Duration.ofDays(365 * 200));
      assertThat(d.toNanos()).isPositive();
    });
  }

  @Test
  void imfFixdate() {
    assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:02:00 GMT", clock)).contains(Duration.ofMinutes(2));
  }

  @Test
  void obsoleteRfc850Date() {
    assertThat(RetryAfter.parse("Thursday, 01-Jan-26 00:02:00 GMT", clock)).contains(Duration.ofMinutes(2));
  }

  @Test
  void obsoleteAsctimeDate() {
    assertThat(RetryAfter.parse("Thu Jan  1 00:02:00 2026", clock)).contains(Duration.ofMinutes(2));
  }

  @Test
  void rfc850TwoDigitYearMoreThanFiftyYearsAheadIsThePreviousCentury() {
    assertThat(RetryAfter.parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", clock))
        .contains(Instant.parse("1994-11-06T08:49:37Z"));
  }

  @Test
  void dateInThePastIsZero() {
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", clock)).contains(Duration.ZERO);
  }

  @Test
  void serverClockOneHourAheadIsReadAgainstItsOwnDateHeader() {
    String serverNow = "Thu, 01 Jan 2026 01:00:00 GMT";
    String retryAt = "Thu, 01 Jan 2026 01:00:30 GMT";

    assertThat(RetryAfter.parse(retryAt, serverNow, clock)).contains(Duration.ofSeconds(30));
    assertThat(RetryAfter.parse(retryAt, clock)).contains(Duration.ofSeconds(3630));
  }

  @Test
  void unreadableDateHeaderFallsBackToTheClock() {
    assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:00:10 GMT", "yesterday", clock))
        .contains(Duration.ofSeconds(10));
  }

  @Test
  void dateHeaderDoesNotAffectDelaySeconds() {
    assertThat(RetryAfter.parse("7", "Thu, 01 Jan 2026 05:00:00 GMT", clock)).contains(Duration.ofSeconds(7));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "  ", "soon", "1.5", "12s", "-", "Thu, 32 Jan 2026 00:00:00 GMT",
      "2026-01-01T00:02:00Z", "Fri, 01 Jan 2026 00:02:00 GMT"})
  void garbageIsEmpty(String value) {
    assertThat(RetryAfter.parse(value, clock)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"Fr\u0131, 02 Jan 2026 00:00:00 GMT", "\u017fat, 03 Jan 2026 00:00:00 GMT",
      "Fr\u0130day, 02-Jan-26 00:00:00 GMT", "Fri Jan  2 00:00:00 2026\u00a0x", "Fri, 02 Jan 2026 00:00:00 GMT\u0000x"})
  void httpDateWithANonAsciiCharacterIsEmptyEvenWhenJavaTimeWouldMatchItCaseInsensitively(String value) {
    assertThat(RetryAfter.parse(value, clock)).isEmpty();
    assertThat(RetryAfter.parseHttpDate(value, clock)).isEmpty();
  }

  @Test
  void nullIsEmpty() {
    assertThat(RetryAfter.parse(null, clock)).isEmpty();
  }
}
