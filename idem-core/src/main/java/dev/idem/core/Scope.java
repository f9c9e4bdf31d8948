package dev.idem.core;

import java.util.Objects;

/**
 * Who owns a key: a tenant or principal. Keys never cross scopes: the same key in two scopes names two independent
 * records.
 *
 * @param value 1 to 255 characters, no control characters
 */
public record Scope(String value) {
  public static final int MAX_LENGTH = 255;

  public Scope {
    Names.check("scope", value, MAX_LENGTH);
  }

  public static Scope of(String value) {
    return new Scope(value);
  }

  @Override
  public String toString() {
    return value;
  }

  /** Shared validation of scope and operation names. */
  static final class Names {
    private Names() {}

    static void check(String what, String value, int max) {
      Objects.requireNonNull(value, what);
      if (value.isEmpty() || value.length() > max) {
        throw new InvalidKeyException(what + " must be 1 to " + max + " characters, got " + value.length());
      }
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if (Character.isISOControl(c)) {
          throw new InvalidKeyException(what + " '" + value.replaceAll("\\p{Cntrl}", "?")
              + "' holds a control character at position " + i);
        }
        if (Character.isSurrogate(c)) {
          boolean paired = Character.isHighSurrogate(c) && i + 1 < value.length()
              && Character.isLowSurrogate(value.charAt(i + 1));
          if (!paired) {
            throw new InvalidKeyException(what + " holds an unpaired surrogate at position " + i
                + "; it would not survive the trip to a database");
          }
          i++;
        }
      }
    }
  }
}
