package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
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

  /** 2026-11-26T00:00:00Z: the RFC 850 limit is 2076-11-26T00:00:00Z. */
  private static final Clock NOV_26_2026 = Clock.fixed(Instant.parse("2026-11-26T00:00:00Z"), ZoneOffset.UTC);

  @Test
  void rfc850TwoDigitYearComparesTheWholeDateWithFiftyYearsFromNow() {
    // 2076-12-31 is more than 50 years after 2026-11-26 although 2076 is only 50 years after 2026
    assertThat(RetryAfter.parseHttpDate("Friday, 31-Dec-76 23:59:59 GMT", NOV_26_2026))
        .contains(Instant.parse("1976-12-31T23:59:59Z"));
    // exactly 50 years ahead is not more than 50 years ahead; one second later is
    assertThat(RetryAfter.parseHttpDate("Thursday, 26-Nov-76 00:00:00 GMT", NOV_26_2026))
        .contains(Instant.parse("2076-11-26T00:00:00Z"));
    assertThat(RetryAfter.parseHttpDate("Thursday, 26-Nov-76 00:00:01 GMT", NOV_26_2026)).isEmpty();
    assertThat(RetryAfter.parseHttpDate("Thursday, 26-Nov-76 00:00:01 GMT",
        Clock.offset(NOV_26_2026, Duration.ofSeconds(1)))).contains(Instant.parse("2076-11-26T00:00:01Z"));
    assertThat(RetryAfter.parseHttpDate("Wednesday, 25-Nov-76 23:59:59 GMT", NOV_26_2026))
        .contains(Instant.parse("2076-11-25T23:59:59Z"));
    assertThat(RetryAfter.parseHttpDate("Friday, 27-Nov-26 00:00:00 GMT", NOV_26_2026))
        .contains(Instant.parse("2026-11-27T00:00:00Z"));
    assertThat(RetryAfter.parseHttpDate("Saturday, 31-Dec-77 23:59:59 GMT", NOV_26_2026))
        .contains(Instant.parse("1977-12-31T23:59:59Z"));
  }

  @Test
  void rfc850CenturyIsChosenBeforeTheDayNameIsChecked() {
    // 31 Dec 2076 is a Thursday, but the date resolves to 1976, a Friday: refused, never read as 2076
    assertThat(RetryAfter.parseHttpDate("Thursday, 31-Dec-76 23:59:59 GMT", NOV_26_2026)).isEmpty();
    assertThat(RetryAfter.parse("Thursday, 31-Dec-76 23:59:59 GMT", NOV_26_2026)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"Wed, 31 Nov 1994 08:49:37 GMT", "Wednesday, 31-Nov-94 08:49:37 GMT",
      "Wed Nov 31 08:49:37 1994", "Sat, 29 Feb 2025 00:00:00 GMT", "Saturday, 29-Feb-25 00:00:00 GMT",
      "Sat Feb 29 00:00:00 2025", "Thu, 30 Feb 2026 00:00:00 GMT", "Thursday, 30-Feb-26 00:00:00 GMT",
      "Mon Feb 30 00:00:00 2026", "Thu, 31 Apr 2026 00:00:00 GMT", "Thu, 01 Jan 2026 24:00:00 GMT",
      "Thursday, 01-Jan-26 24:00:00 GMT", "Thu Jan  1 24:00:00 2026", "Thursday, 00-Jan-26 00:00:00 GMT",
      "Thu Jan  0 00:00:00 2026"})
  void impossibleDatesAreRefusedNotMovedToAValidOne(String value) {
    assertThat(RetryAfter.parseHttpDate(value, NOV_26_2026)).isEmpty();
    assertThat(RetryAfter.parse(value, NOV_26_2026)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
      "Sun Nov  6 08:49:37 1994"})
  void theRfcExampleReadsTheSameInEveryForm(String value) {
    assertThat(RetryAfter.parseHttpDate(value, NOV_26_2026)).contains(Instant.parse("1994-11-06T08:49:37Z"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"Mon, 06 Nov 1994 08:49:37 GMT", "Monday, 06-Nov-94 08:49:37 GMT",
      "Mon Nov  6 08:49:37 1994", "Sat, 29 Feb 2024 00:00:00 GMT"})
  void aDayNameThatIsNotTheDatesIsRefused(String value) {
    assertThat(RetryAfter.parseHttpDate(value, NOV_26_2026)).isEmpty();
  }

  @Test
  void leapDayOfALeapYearIsRead() {
    assertThat(RetryAfter.parseHttpDate("Thu, 29 Feb 2024 12:00:00 GMT", NOV_26_2026))
        .contains(Instant.parse("2024-02-29T12:00:00Z"));
    assertThat(RetryAfter.parseHttpDate("Thursday, 29-Feb-24 12:00:00 GMT", NOV_26_2026))
        .contains(Instant.parse("2024-02-29T12:00:00Z"));
    assertThat(RetryAfter.parseHttpDate("Thu Feb 29 12:00:00 2024", NOV_26_2026))
        .contains(Instant.parse("2024-02-29T12:00:00Z"));
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
