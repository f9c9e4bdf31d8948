package dev.idem.retry.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.retry.RetryAfter;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;

/**
 * Fuzzes {@link RetryAfter}: hostile header values never throw and never give a negative delay; every date in the
 * three HTTP-date forms reads as the instant it was written from (and as {@code java.time}'s RFC 1123 parser reads
 * the IMF-fixdate); delay-seconds read exactly and saturate; a value holding a character outside printable ASCII is
 * refused.
 */
@AddLifecycleHook(FuzzTries.class)
class RetryAfterFuzzTest {
  /** 2026-01-01T00:00:00Z: two-digit RFC 850 years read as 1976-01-01T00:00:01Z to 2076-01-01T00:00:00Z. */
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
  /** The newest instant an RFC 850 date can name against {@link #CLOCK}: now + 50 years. */
  private static final Instant RFC_850_LIMIT = Instant.parse("2076-01-01T00:00:00Z");
  private static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000L;
  private static final DateTimeFormatter IMF =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter RFC_850 =
      DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter ASCTIME =
      DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC);
  private static final List<Character> HOSTILE = ("\u0000\u0001\u000b\u007f\u0080\u00a0\u00e9\u0130\u0131\u017f"
      + "\u2028\u212a\ufeff\uff10\uff11\ud800\udc00").chars().mapToObj(c -> (char) c).collect(Collectors.toList());

  @Property(tries = 10_000)
  void hostileValuesNeverThrowNorGiveANegativeDelay(@ForAll("hostileValues") String retryAfter,
      @ForAll("hostileDates") String date) {
    Optional<Duration> delay = RetryAfter.parse(retryAfter, date, CLOCK);
    Optional<Instant> at = RetryAfter.parseHttpDate(retryAfter, CLOCK);

    delay.ifPresent(d -> assertThat(d).isGreaterThanOrEqualTo(Duration.ZERO));
    if (at.isPresent()) {
      assertThat(delay).isPresent();
    }
  }

  @Property(tries = 10_000)
  void everyHttpDateFormReadsAsTheInstantItWasWrittenFrom(@ForAll("instants") Instant t,
      @ForAll("instants") Instant serverNow) {
    String imf = IMF.format(t);
    String asctime = ASCTIME.format(t);

    assertThat(RetryAfter.parseHttpDate(imf, CLOCK)).contains(t);
    assertThat(Instant.from(DateTimeFormatter.RFC_1123_DATE_TIME.parse(imf))).isEqualTo(t);
    assertThat(RetryAfter.parseHttpDate(asctime, CLOCK)).as(asctime).contains(t);
    if (inRfc850Window(t, RFC_850_LIMIT)) {
      assertThat(RetryAfter.parseHttpDate(RFC_850.format(t), CLOCK)).as(RFC_850.format(t)).contains(t);
    }
    Duration expected = Duration.between(serverNow, t);
    assertThat(RetryAfter.parse(" " + imf + " ", IMF.format(serverNow), CLOCK))
        .contains(expected.isNegative() ? Duration.ZERO : expected);
  }

  /**
   * Against any now, an RFC 850 date in the hundred years that end 50 years after now reads as the instant it was
   * written from: the century is chosen by the whole date, not the year alone.
   */
  @Property(tries = 10_000)
  void rfc850DatesReadAsTheirInstantRelativeToAnyNow(@ForAll("nows") Instant now, @ForAll("offsets") long back) {
    Instant limit = now.atZone(ZoneOffset.UTC).plusYears(50).toInstant();
    Instant t = limit.minusSeconds(back);
    Clock clock = Clock.fixed(now, ZoneOffset.UTC);
    String written = RFC_850.format(t);

    if (inRfc850Window(t, limit)) {
      assertThat(RetryAfter.parseHttpDate(written, clock)).as(written + " at " + now).contains(t);
    }
    // a second more than 50 years ahead is a century earlier, where the day name is checked against that date
    Instant ahead = limit.plusSeconds(1 + back % 86_400);
    String aheadWritten = RFC_850.format(ahead);
    Instant earlier = ahead.atZone(ZoneOffset.UTC).minusYears(100).toInstant();
    Optional<Instant> read = RetryAfter.parseHttpDate(aheadWritten, clock);
    if (RFC_850.format(earlier).equals(aheadWritten)) {
      assertThat(read).as(aheadWritten + " at " + now).contains(earlier);
    } else {
      assertThat(read).as(aheadWritten + " at " + now).isEmpty();
    }
  }

  /** A day that its month does not have, in any of the three forms and with any day name, is refused. */
  @Property(tries = 10_000)
  void impossibleDatesAreRefusedInEveryForm(@ForAll("impossibleDates") String[] forms) {
    for (String value : forms) {
      assertThat(RetryAfter.parseHttpDate(value, CLOCK)).as(value).isEmpty();
      assertThat(RetryAfter.parse(value, CLOCK)).as(value).isEmpty();
    }
  }

  /** A valid date under a day name that is not its own is refused in every form (RFC 850: within its window). */
  @Property(tries = 10_000)
  void aDayNameThatIsNotTheDatesIsRefused(@ForAll("instants") Instant t, @ForAll("otherDays") int shift) {
    java.time.ZonedDateTime at = t.atZone(ZoneOffset.UTC);
    java.time.DayOfWeek wrong = at.getDayOfWeek().plus(shift);
    String shortName = wrong.getDisplayName(java.time.format.TextStyle.SHORT, Locale.US);
    String longName = wrong.getDisplayName(java.time.format.TextStyle.FULL, Locale.US);
    String imf = shortName + IMF.format(t).substring(3);
    String asctime = shortName + ASCTIME.format(t).substring(3);
    String rfc850 = longName + RFC_850.format(t).substring(RFC_850.format(t).indexOf(','));

    assertThat(RetryAfter.parseHttpDate(imf, CLOCK)).as(imf).isEmpty();
    assertThat(RetryAfter.parseHttpDate(asctime, CLOCK)).as(asctime).isEmpty();
    if (inRfc850Window(t, RFC_850_LIMIT)) {
      // outside the window the two digits name another century, whose date may well have that name
      assertThat(RetryAfter.parseHttpDate(rfc850, CLOCK)).as(rfc850).isEmpty();
    }
  }

  private static boolean inRfc850Window(Instant t, Instant limit) {
    return !t.isAfter(limit) && t.isAfter(limit.atZone(ZoneOffset.UTC).minusYears(100).toInstant());
  }

  @Provide
  Arbitrary<Instant> nows() {
    return Arbitraries.longs().between(Instant.parse("1900-01-01T00:00:00Z").getEpochSecond(),
        Instant.parse("2900-12-31T23:59:59Z").getEpochSecond()).map(Instant::ofEpochSecond);
  }

  /** Seconds back from the limit: the first days and the last days of the window weigh as much as the rest. */
  @Provide
  Arbitrary<Long> offsets() {
    long century = 100L * 366 * 86_400;
    return Arbitraries.oneOf(Arbitraries.longs().between(0, 3 * 86_400), Arbitraries.longs().between(0, century),
        Arbitraries.longs().between(century - 400 * 86_400L, century + 3 * 86_400));
  }

  @Provide
  Arbitrary<Integer> otherDays() {
    return Arbitraries.integers().between(1, 6);
  }

  /** Day 29 to 31 of a month that does not have it, any year, time and day name, in the three forms. */
  @Provide
  Arbitrary<String[]> impossibleDates() {
    String[] days = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    String[] longDays = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
    String[] months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    return Arbitraries.integers().between(1601, 9999).flatMap(year -> Arbitraries.of(2, 4, 6, 9, 11)
        .flatMap(month -> Arbitraries.integers().between(
                java.time.YearMonth.of(year, month).lengthOfMonth() + 1, 31)
            .flatMap(day -> Arbitraries.integers().between(0, 6).flatMap(dow -> Arbitraries.integers()
                .between(0, 86_399).map(second -> {
                  String time = String.format(Locale.ROOT, "%02d:%02d:%02d", second / 3600, second / 60 % 60,
                      second % 60);
                  return new String[] {
                      String.format(Locale.ROOT, "%s, %02d %s %04d %s GMT", days[dow], day, months[month - 1], year,
                          time),
                      // two digits may name a leap year whatever the four did: 30 and 31 Feb never exist
                      String.format(Locale.ROOT, "%s, %02d-%s-%02d %s GMT", longDays[dow],
                          month == 2 ? Math.max(day, 30) : day, months[month - 1],
                          year % 100, time),
                      String.format(Locale.ROOT, "%s %s %2d %s %04d", days[dow], months[month - 1], day, time, year)};
                })))));
  }

  @Property(tries = 10_000)
  void delaySecondsReadExactlyAndSaturate(@ForAll("digitStrings") String digits, @ForAll("blanks") String before,
      @ForAll("blanks") String after) {
    BigInteger value = new BigInteger(digits);
    long expected = value.min(BigInteger.valueOf(MAX_SECONDS)).longValueExact();

    assertThat(RetryAfter.parse(before + digits + after, CLOCK)).contains(Duration.ofSeconds(expected));
    assertThat(RetryAfter.parse(before + "-" + digits + after, CLOCK)).contains(Duration.ZERO);
  }

  @Property(tries = 10_000)
  void aValueHoldingACharacterOutsidePrintableAsciiIsRefused(@ForAll("validValues") String valid,
      @ForAll("hostileChars") char c, @ForAll("positions") double where) {
    // strictly inside the value: the parser trims control characters and spaces from both ends, as it should
    int at = Math.min(valid.length() - 2, 1 + (int) (where * (valid.length() - 2)));
    String replaced = valid.substring(0, at) + c + valid.substring(at + 1);
    String inserted = valid.substring(0, at) + c + valid.substring(at);

    String lookalike = lookalike(valid, at);

    assertThat(RetryAfter.parse(replaced, CLOCK)).as(replaced).isEmpty();
    assertThat(RetryAfter.parse(inserted, CLOCK)).as(inserted).isEmpty();
    assertThat(RetryAfter.parse(lookalike, CLOCK)).as(lookalike).isEmpty();
  }

  /**
   * {@code value} with the first of its letters i, s or k from {@code from} on (or before, if none) replaced by a
   * non-ASCII letter that case-insensitive Unicode matching takes for it: dotless i, dotted capital I, long s, Kelvin.
   */
  private static String lookalike(String value, int from) {
    String letters = "iIsSkK";
    String[] twins = {"\u0131", "\u0130", "\u017f", "\u017f", "\u212a", "\u212a"};
    for (int pass = 0; pass < 2; pass++) {
      for (int i = pass == 0 ? from : 0; i < value.length(); i++) {
        int letter = letters.indexOf(value.charAt(i));
        if (letter >= 0) {
          return value.substring(0, i) + twins[letter] + value.substring(i + 1);
        }
      }
    }
    return value + "\u0131";
  }

  @Provide
  Arbitrary<Instant> instants() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(Instant.parse("1601-01-01T00:00:00Z").getEpochSecond(),
            Instant.parse("9999-12-31T23:59:59Z").getEpochSecond()),
        Arbitraries.longs().between(Instant.parse("1977-01-01T00:00:00Z").getEpochSecond(),
            Instant.parse("2076-12-31T23:59:59Z").getEpochSecond()))
        .map(Instant::ofEpochSecond);
  }

  @Provide
  Arbitrary<String> validValues() {
    return Arbitraries.oneOf(
        instants().map(IMF::format),
        instants().map(ASCTIME::format),
        instants().filter(t -> inRfc850Window(t, RFC_850_LIMIT)).map(RFC_850::format),
        Arbitraries.strings().numeric().ofMinLength(3).ofMaxLength(12));
  }

  @Provide
  Arbitrary<Character> hostileChars() {
    return Arbitraries.oneOf(Arbitraries.of(HOSTILE), Arbitraries.chars().range('\u0080', '\uffff'),
        Arbitraries.chars().range('\u0000', '\u001f'));
  }

  @Provide
  Arbitrary<Double> positions() {
    return Arbitraries.doubles().between(0, 1);
  }

  @Provide
  Arbitrary<String> digitStrings() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(0, 1_000_000).map(String::valueOf),
        Arbitraries.longs().between(0, Long.MAX_VALUE).map(String::valueOf),
        Arbitraries.strings().numeric().ofMinLength(1).ofMaxLength(40),
        Arbitraries.strings().numeric().ofMinLength(1000).ofMaxLength(5000),
        Arbitraries.of(Long.toString(MAX_SECONDS), Long.toString(MAX_SECONDS + 1), "0", "000", "9223372036854775807",
            "9223372036854775808", "18446744073709551616"));
  }

  @Provide
  Arbitrary<String> blanks() {
    return Arbitraries.of("", "", " ", "\t", "  ");
  }

  @Provide
  Arbitrary<String> hostileDates() {
    return Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just((String) null)), Tuple.of(3, hostileValues()));
  }

  /** Valid values mutated, printable noise, any Unicode, long runs, and odd spellings of numbers and dates. */
  @Provide
  Arbitrary<String> hostileValues() {
    Arbitrary<String> mutated = validValues().flatMap(v -> Arbitraries.integers().between(0, v.length() - 1)
        .flatMap(at -> Arbitraries.oneOf(hostileChars(), Arbitraries.chars().range(' ', '~')).flatMap(c ->
            Arbitraries.of(
                v.substring(0, at) + c + v.substring(at + 1),
                v.substring(0, at) + c + v.substring(at),
                v.substring(0, at) + v.substring(at + 1),
                v.substring(0, at),
                v.toLowerCase(Locale.ROOT),
                v.toUpperCase(Locale.ROOT),
                v.replace("GMT", "UTC"),
                v.replace(" GMT", " +0100"),
                v + v))));
    return Arbitraries.frequencyOf(
        Tuple.of(4, mutated),
        Tuple.of(2, validValues()),
        Tuple.of(2, Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(40)),
        Tuple.of(2, Arbitraries.strings().all().ofMaxLength(40)),
        Tuple.of(1, Arbitraries.strings().withChars("0123456789 +-:,.eE").ofMaxLength(6000)),
        Tuple.of(1, Arbitraries.of("", " ", "+", "-", "--5", "+-5", "5.0", "1e3", "0x10", "\u0665", "\uff15",
            "Thu, 01 Jan 2026 00:00:00", "Thu, 31 Feb 2026 00:00:00 GMT", "Fri, 01 Jan 2026 00:00:00 GMT",
            "Thu, 01 Jan 2026 24:00:00 GMT", "Thu, 01 Jan 2026 23:59:60 GMT", "Thu, 01 Jan 99999 00:00:00 GMT",
            "Thu, 1 Jan 2026 00:00:00 GMT", "Thursday, 01-Jan-2026 00:00:00 GMT", "Thu Jan 01 00:00:00 2026")));
  }
}
