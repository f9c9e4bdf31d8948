package dev.idem.outbox;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/** Input limits shared by events, queries and the inbox; every one matches a column width. */
final class Limits {
  static final int NAME = 255;
  static final int AGGREGATE_TYPE = 100;
  static final int MAX_HEADERS = 32;
  static final int HEADER_VALUE = 1024;
  private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}");
  private static final Pattern DESTINATION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}(:[\\x21-\\x7e]{1,190})?");

  private Limits() {}

  static String text(String what, String value, int max) {
    Objects.requireNonNull(value, what);
    if (value.isEmpty() || value.length() > max) {
      throw new IllegalArgumentException(what + " must be 1 to " + max + " characters, got " + value.length());
    }
    if (value.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException(what + " must not contain control characters");
    }
    return value;
  }

  static void header(String name, String value) {
    Objects.requireNonNull(name, "header name");
    Objects.requireNonNull(value, "header value");
    if (!TOKEN.matcher(name).matches()) {
      throw new IllegalArgumentException("header name must be an HTTP token of at most 128 characters: '" + name + "'");
    }
    if (value.length() > HEADER_VALUE) {
      throw new IllegalArgumentException("header '" + name + "' value must be at most " + HEADER_VALUE + " characters");
    }
    // visible ASCII, space and tab: what every transport (HTTP headers included) can carry
    if (value.chars().anyMatch(c -> c != '\t' && (c < 0x20 || c > 0x7e))) {
      throw new IllegalArgumentException("header '" + name + "' value must be visible ASCII, spaces and tabs");
    }
  }

  static String destination(String destination) {
    Objects.requireNonNull(destination, "destination");
    if (!DESTINATION.matcher(destination).matches()) {
      throw new IllegalArgumentException("destination must be <route> or <route>:<detail>, where route is"
          + " [A-Za-z0-9_.-] (at most 64) and detail printable ASCII (at most 190): '" + destination + "'");
    }
    return destination;
  }

  /** {@code value}, when it is {@code min} to {@code max}; otherwise an exception that says so. */
  static int range(String what, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(what + " must be " + min + " to " + max + ", got " + value);
    }
    return value;
  }

  /** {@code value}, when it is not null and {@code min} to {@code max}; otherwise an exception saying {@code rule}. */
  static Duration range(String rule, Duration value, Duration min, Duration max) {
    if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(rule + ", got " + value);
    }
    return value;
  }

  /** The route part of a destination: the text before the first ':'. */
  static String route(String destination) {
    int colon = destination.indexOf(':');
    return colon < 0 ? destination : destination.substring(0, colon);
  }
}
