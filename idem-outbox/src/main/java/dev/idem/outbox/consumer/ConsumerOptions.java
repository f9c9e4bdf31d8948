package dev.idem.outbox.consumer;

import java.time.Duration;

/**
 * The checks the inbox consumers' builders share. Each returns the value it was given, or throws an {@link
 * IllegalArgumentException} that names the option, the range and the value, e.g. {@code "channels must be 1 to 64,
 * got 0"}.
 */
public final class ConsumerOptions {
  private ConsumerOptions() {}

  /** {@code value}, when it is 1 to {@code maxLength} characters without control characters. */
  public static String name(String what, String value, int maxLength) {
    if (value == null || value.isEmpty() || value.length() > maxLength
        || value.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException(what + " must be 1 to " + maxLength + " characters without control"
          + " characters, got '" + value + "'");
    }
    return value;
  }

  /** {@code value}, when it is {@code min} to {@code max}. */
  public static int between(String what, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(what + " must be " + min + " to " + max + ", got " + value);
    }
    return value;
  }

  /** {@code value}, when it is not null and {@code min} to {@code max}. */
  public static Duration between(String what, Duration value, Duration min, Duration max) {
    if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(what + " must be " + text(min) + " to " + text(max) + ", got " + value);
    }
    return value;
  }

  /** {@code d} in its largest whole unit: {@code 0}, {@code 10 ms}, {@code 30 s}, {@code 5 min}, {@code 12 h}. */
  private static String text(Duration d) {
    long ms = d.toMillis();
    if (ms == 0) {
      return "0";
    }
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + " h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + " min";
    }
    return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
  }
}
