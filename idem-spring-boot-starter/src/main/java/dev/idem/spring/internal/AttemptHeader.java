package dev.idem.spring.internal;

import dev.idem.core.protocol.IdemHeaders;
import java.util.OptionalInt;

/**
 * The one reading of the {@code Idempotency-Attempt} header (the attempt number idem-client sends) shared by the MDC
 * filter and the span attribute filter: a decimal number from 1 to {@value #MAX}, leading zeros allowed, surrounding
 * whitespace ignored; anything else (a sign, a fraction, other characters, a larger number) is no attempt at all.
 * Thread-safe.
 */
public final class AttemptHeader {
  /** The header idem-client sends with the attempt number. */
  public static final String NAME = IdemHeaders.IDEMPOTENCY_ATTEMPT;
  /** The largest attempt number taken; a client's retries never come near it, so larger values are not attempts. */
  public static final int MAX = 1000;

  private AttemptHeader() {}

  /** The attempt number in {@code header}; empty when the header is absent or not a number from 1 to {@value #MAX}. */
  public static OptionalInt parse(String header) {
    if (header == null) {
      return OptionalInt.empty();
    }
    String digits = header.trim();
    if (digits.isEmpty()) {
      return OptionalInt.empty();
    }
    int value = 0;
    for (int i = 0; i < digits.length(); i++) {
      char c = digits.charAt(i);
      if (c < '0' || c > '9') {
        return OptionalInt.empty();
      }
      value = value * 10 + (c - '0');
      if (value > MAX) {
        return OptionalInt.empty();
      }
    }
    return value >= 1 ? OptionalInt.of(value) : OptionalInt.empty();
  }
}
