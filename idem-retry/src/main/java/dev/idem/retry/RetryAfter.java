package dev.idem.retry;

import java.text.ParsePosition;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoField;
import java.time.temporal.TemporalAccessor;
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

  // Strict resolution: 31 Nov or 29 Feb 2025 is refused (the default, smart, would read them as 30 Nov and 28 Feb),
  // and so is 24:00:00 (smart would read it as the next day's midnight). A day name that is not the date's is refused.
  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.US).withResolverStyle(ResolverStyle.STRICT);
  private static final DateTimeFormatter ASCTIME = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss uuuu", Locale.US)
      .withZone(ZoneOffset.UTC).withResolverStyle(ResolverStyle.STRICT);
  /**
   * The RFC 850 form with its two-digit year left unresolved: the century depends on the whole date (see
   * {@link #parseHttpDate}), so the fields are read raw and the date is built and checked by {@link #rfc850}.
   */
  private static final DateTimeFormatter RFC_850 = new DateTimeFormatterBuilder()
      .parseCaseInsensitive()
      .appendPattern("EEEE, dd-MMM-")
      .appendValue(ChronoField.YEAR_OF_ERA, 2)
      .appendPattern(" HH:mm:ss 'GMT'")
      .toFormatter(Locale.US);

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
   * An HTTP-date in any of the three forms RFC 9110 requires recipients to accept (section 5.6.7).
   *
   * <p>A two-digit RFC 850 year is read as RFC 9110 requires: the latest year with those two digits whose date and
   * time is not more than 50 years after {@code clock}'s now. The whole timestamp is compared, not the year alone:
   * with now 2026-11-26, {@code Friday, 31-Dec-76 23:59:59 GMT} is 1976-12-31T23:59:59Z, because 2076-12-31 is more
   * than 50 years ahead, while {@code 26-Nov-76} at midnight is still 2076. The century is chosen first and the day
   * name checked afterwards: {@code Thursday, 31-Dec-76 23:59:59 GMT} is refused (31 Dec 1976 was a Friday), and never
   * read as 2076, whose 31 Dec is a Thursday.
   *
   * <p>Every form is resolved strictly: a date that does not exist ({@code Wed, 31 Nov 1994 08:49:37 GMT}, 29 Feb of
   * a common year), an hour of 24, or a day name that is not the date's gives {@link Optional#empty()}; nothing is
   * moved to a nearby valid date.
   */
  public static Optional<Instant> parseHttpDate(String value, Clock clock) {
    // An HTTP-date is printable ASCII. java.time matches names case-insensitively with Unicode case mapping: it would
    // read "Sat" spelled with a long s (U+017F) as "Sat", and "Fri" with a dotless i (U+0131) as "Fri".
    for (int i = 0; i < value.length(); i++) {
      if (value.charAt(i) < 0x20 || value.charAt(i) > 0x7e) {
        return Optional.empty();
      }
    }
    for (DateTimeFormatter format : new DateTimeFormatter[] {IMF_FIXDATE, ASCTIME}) {
      try {
        return Optional.of(Instant.from(format.parse(value)));
      } catch (DateTimeException e) {
        // not this form; try the next
      }
    }
    return rfc850(value, clock);
  }

  /** The RFC 850 form, its century chosen by the whole date against now + 50 years, resolved strictly. */
  private static Optional<Instant> rfc850(String value, Clock clock) {
    ParsePosition position = new ParsePosition(0);
    TemporalAccessor fields = RFC_850.parseUnresolved(value, position);
    if (fields == null || position.getErrorIndex() >= 0 || position.getIndex() != value.length()) {
      return Optional.empty();
    }
    int twoDigits = (int) fields.getLong(ChronoField.YEAR_OF_ERA);
    int month = (int) fields.getLong(ChronoField.MONTH_OF_YEAR);
    int day = (int) fields.getLong(ChronoField.DAY_OF_MONTH);
    int hour = (int) fields.getLong(ChronoField.HOUR_OF_DAY);
    int minute = (int) fields.getLong(ChronoField.MINUTE_OF_HOUR);
    int second = (int) fields.getLong(ChronoField.SECOND_OF_MINUTE);
    LocalDateTime limit = LocalDateTime.ofInstant(clock.instant(), ZoneOffset.UTC).plusYears(50);
    // The latest year ending in those digits that is not after the limit's year; a century earlier when the date in
    // that year would be after the limit. Month, day and time compare as numbers, so an impossible date (31 Nov)
    // still picks a century and is then refused below.
    int year = limit.getYear() - Math.floorMod(limit.getYear() - twoDigits, 100);
    if (year == limit.getYear() && compare(month, day, hour, minute, second, limit) > 0) {
      year -= 100;
    }
    try {
      LocalDateTime at = LocalDateTime.of(year, month, day, hour, minute, second);
      if (at.getDayOfWeek().getValue() != fields.getLong(ChronoField.DAY_OF_WEEK)) {
        return Optional.empty();
      }
      return Optional.of(at.toInstant(ZoneOffset.UTC));
    } catch (DateTimeException e) {
      return Optional.empty();
    }
  }

  /** The order of month-day time against {@code limit}'s in the same year, without needing a valid date. */
  private static int compare(int month, int day, int hour, int minute, int second, LocalDateTime limit) {
    long written = ((((month * 32L + day) * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000_000L;
    long bound = ((((limit.getMonthValue() * 32L + limit.getDayOfMonth()) * 24 + limit.getHour()) * 60
        + limit.getMinute()) * 60 + limit.getSecond()) * 1_000_000_000L + limit.getNano();
    return Long.compare(written, bound);
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
