package dev.idem.retry;

import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Reads the HTTP {@code Retry-After} header (RFC 9110 section 10.2.3): either delay-seconds or an HTTP-date
 * (IMF-fixdate, or the obsolete RFC 850 and asctime forms, section 5.6.7). Stateless and thread-safe.
 *
 * <p>An HTTP-date is read against the response's own {@code Date} header when one is given, so a server whose clock
 * is off by an hour still yields the delay it meant; otherwise against the supplied clock. A negative delay or a date
 * in the past gives {@link Duration#ZERO}; a value that is neither form gives {@link Optional#empty()}.
 *
 * <p>The result is a floor on the next delay (see {@link RetryPolicy.Builder#retryAfter}): a retry never starts
 * sooner than the server asked.
 */
public final class RetryAfter {
  /** Longest delay-seconds honoured; larger values saturate (they end any deadline-bound operation anyway). */
  private static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

  private static final DateTimeFormatter IMF_FIXDATE = DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.US);
  private static final DateTimeFormatter ASCTIME =
      DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC);

  private RetryAfter() {}

  /** {@link #parse(String, String, Clock)} without a {@code Date} header: dates are read against {@code clock}. */
  public static Optional<Duration> parse(String retryAfter, Clock clock) {
    return parse(retryAfter, null, clock);
  }

  /**
   * The delay a {@code Retry-After} value asks for.
   *
   * @param retryAfter the header value; null gives empty
   * @param date the response's {@code Date} header, or null; used as "now" for an HTTP-date when it parses
   * @param clock "now" when there is no usable {@code Date} header
   */
  public static Optional<Duration> parse(String retryAfter, String date, Clock clock) {
    Objects.requireNonNull(clock, "clock");
    if (retryAfter == null) {
      return Optional.empty();
    }
    String value = retryAfter.trim();
    if (value.isEmpty()) {
      return Optional.empty();
    }
    if (isSignedInteger(value)) {
      if (value.charAt(0) == '-') {
        return Optional.of(Duration.ZERO);
      }
      return Optional.of(Duration.ofSeconds(parseSaturating(value)));
    }
    Optional<Instant> at = parseHttpDate(value, clock);
    if (at.isEmpty()) {
      return Optional.empty();
    }
    Instant now = date == null ? clock.instant() : parseHttpDate(date.trim(), clock).orElseGet(clock::instant);
    Duration delay = Duration.between(now, at.get());
    return Optional.of(delay.isNegative() ? Duration.ZERO : delay);
  }

  /**
   * An HTTP-date in any of the three forms RFC 9110 requires recipients to accept. A two-digit RFC 850 year is read as
   * the year with those digits nearest to, and not more than 50 years after, {@code clock}'s year.
   */
  public static Optional<Instant> parseHttpDate(String value, Clock clock) {
    // An HTTP-date is printable ASCII. java.time matches names case-insensitively with Unicode case mapping: it would
    // read "Sat" spelled with a long s (U+017F) as "Sat", and "Fri" with a dotless i (U+0131) as "Fri".
    for (int i = 0; i < value.length(); i++) {
      if (value.charAt(i) < 0x20 || value.charAt(i) > 0x7e) {
        return Optional.empty();
      }
    }
    for (DateTimeFormatter format : new DateTimeFormatter[] {IMF_FIXDATE, rfc850(clock), ASCTIME}) {
      try {
        return Optional.of(Instant.from(format.parse(value)));
      } catch (DateTimeException e) {
        // not this form; try the next
      }
    }
    return Optional.empty();
  }

  private static DateTimeFormatter rfc850(Clock clock) {
    int year = LocalDate.ofInstant(clock.instant(), ZoneOffset.UTC).getYear();
    return new DateTimeFormatterBuilder()
        .parseCaseInsensitive()
        .appendPattern("EEEE, dd-MMM-")
        .appendValueReduced(ChronoField.YEAR, 2, 2, LocalDate.of(year - 49, 1, 1))
        .appendPattern(" HH:mm:ss 'GMT'")
        .toFormatter(Locale.US)
        .withZone(ZoneOffset.UTC);
  }

  private static boolean isSignedInteger(String value) {
    int start = value.charAt(0) == '-' || value.charAt(0) == '+' ? 1 : 0;
    if (start == value.length()) {
      return false;
    }
    for (int i = start; i < value.length(); i++) {
      if (value.charAt(i) < '0' || value.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  private static long parseSaturating(String digits) {
    long seconds = 0;
    for (int i = digits.charAt(0) == '+' ? 1 : 0; i < digits.length(); i++) {
      seconds = seconds * 10 + (digits.charAt(i) - '0');
      if (seconds > MAX_SECONDS) {
        return MAX_SECONDS;
      }
    }
    return seconds;
  }
}
