package dev.idem.core;

import java.util.List;
import java.util.Objects;

/**
 * The client's {@code Idempotency-Key}: 1 to 255 visible ASCII characters (0x21 to 0x7E). Immutable.
 *
 * <p>A key identifies one intent within a {@link Scope} and an {@link Operation}; the triple is the {@link RecordKey}.
 */
public final class IdempotencyKey implements Comparable<IdempotencyKey> {
  /** The longest accepted key, in characters. */
  public static final int MAX_LENGTH = 255;

  private final String value;

  private IdempotencyKey(String value) {
    this.value = value;
  }

  /**
   * Validates and wraps a key.
   *
   * @throws InvalidKeyException when the key is empty, longer than {@value #MAX_LENGTH} characters, or holds a
   *     character outside visible ASCII
   */
  public static IdempotencyKey of(String value) {
    if (value == null || value.isEmpty()) {
      throw new InvalidKeyException("Idempotency-Key is empty; send 1 to 255 visible ASCII characters");
    }
    if (value.length() > MAX_LENGTH) {
      throw new InvalidKeyException(
          "Idempotency-Key is " + value.length() + " characters long; the limit is " + MAX_LENGTH);
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw new InvalidKeyException(
            "Idempotency-Key holds character U+" + String.format("%04X", (int) c) + " at position " + i
                + "; only visible ASCII (0x21-0x7E) is allowed");
      }
    }
    return new IdempotencyKey(value);
  }

  /**
   * Reads a key from the values of one header, as a server receives them: exactly one value must be present, and it
   * is read by {@link #fromHeader}. A header line that folds several values with commas arrives here as one value and
   * is refused as such.
   *
   * @throws InvalidKeyException when there is no value, more than one, or the one value is not a valid key
   */
  public static IdempotencyKey fromHeaderValues(List<String> values) {
    Objects.requireNonNull(values, "values");
    if (values.isEmpty()) {
      throw new InvalidKeyException("Idempotency-Key header is missing");
    }
    if (values.size() > 1) {
      throw new InvalidKeyException(
          "Idempotency-Key header appears " + values.size() + " times; send exactly one value");
    }
    return fromHeader(values.get(0));
  }

  /**
   * Reads a key from one {@code Idempotency-Key} field value. The field is a Structured Field item whose value is a
   * string (RFC 8941, section 3.3.3), so the quoted form is parsed exactly as RFC 8941 section 4.2.5 says, and a bare
   * value, as most clients send it, is taken as it is. Both forms name the same key: {@code "order-7"} and
   * {@code order-7} are one key.
   *
   * <ul>
   *   <li>Quoted: {@code "} then visible ASCII or space, where {@code \"} and {@code \\} are the only escapes,
   *       then {@code "}. An unterminated string, another escape or a character outside that range is refused.
   *   <li>Parameters ({@code "order-7";v=2}) are refused, never dropped: the field defines none, so a parameter is
   *       either a client's mistake or a meaning this server cannot honour, and dropping it would let two different
   *       field values name one key.
   *   <li>Bare: visible ASCII without {@code "}, {@code ;} or {@code ,}; those three would make the value a broken
   *       string, a parameter or a list.
   *   <li>Leading and trailing spaces are ignored, as RFC 8941 parsing does. The key itself must then pass
   *       {@link #of}: 1 to {@value #MAX_LENGTH} visible ASCII characters.
   * </ul>
   *
   * <p>Error messages describe the problem by position and code point, never by echoing the value.
   *
   * @throws InvalidKeyException when the value is not one key in either form
   */
  public static IdempotencyKey fromHeader(String fieldValue) {
    Objects.requireNonNull(fieldValue, "fieldValue");
    int start = 0;
    int end = fieldValue.length();
    while (start < end && fieldValue.charAt(start) == ' ') {
      start++;
    }
    while (end > start && fieldValue.charAt(end - 1) == ' ') {
      end--;
    }
    if (start < end && fieldValue.charAt(start) == '"') {
      return fromStructuredString(fieldValue, start, end);
    }
    for (int i = start; i < end; i++) {
      char c = fieldValue.charAt(i);
      if (c == ';') {
        throw new InvalidKeyException("Idempotency-Key has a ';' at position " + i
            + ": parameters are not accepted; send the key alone, bare or as a quoted string");
      }
      if (c == ',') {
        throw new InvalidKeyException("Idempotency-Key has a ',' at position " + i
            + ": that makes it a list of values; send exactly one key");
      }
      if (c == '"') {
        throw new InvalidKeyException("Idempotency-Key has a '\"' at position " + i
            + ": a quoted key must start and end with '\"'");
      }
    }
    return of(fieldValue.substring(start, end));
  }

  private static IdempotencyKey fromStructuredString(String v, int start, int end) {
    StringBuilder key = new StringBuilder(end - start);
    int i = start + 1;
    while (true) {
      if (i >= end) {
        throw new InvalidKeyException("Idempotency-Key starts a quoted string that never ends");
      }
      char c = v.charAt(i);
      if (c == '\\') {
        char next = i + 1 < end ? v.charAt(i + 1) : 0;
        if (next != '"' && next != '\\') {
          throw new InvalidKeyException("Idempotency-Key has an escape at position " + i
              + " other than \\\" or \\\\, the only two a quoted string allows");
        }
        key.append(next);
        i += 2;
      } else if (c == '"') {
        break;
      } else if (c <= 0x20 || c > 0x7E) {
        // a space is a valid string character but not a key character; named here by its place in the header
        throw new InvalidKeyException("Idempotency-Key holds character U+" + String.format("%04X", (int) c)
            + " at position " + i + "; a key is 1 to " + MAX_LENGTH + " visible ASCII characters");
      } else {
        key.append(c);
        i++;
      }
    }
    int after = i + 1;
    if (after < end) {
      throw new InvalidKeyException(v.charAt(after) == ';'
          ? "Idempotency-Key has parameters after its string: parameters are not accepted; send the key alone"
          : "Idempotency-Key has characters after the closing quote at position " + after);
    }
    return of(key.toString());
  }

  /**
   * {@code <key>:<name>}: this key with a call name appended. <strong>Not scoped</strong>: two tenants that send the
   * same key get the same string. For keys sent to another system use {@link RecordKey#derive} (in a phase,
   * {@code ctx.derivedKey("charge")}), which is unique per scope and operation. The result may exceed
   * {@value #MAX_LENGTH} characters when this key is near the limit.
   *
   * @param name a short name of the call, such as {@code "charge"}; visible ASCII, not empty
   */
  public String derive(String name) {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("derived key name must not be empty");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw new IllegalArgumentException("derived key name must be visible ASCII, got '" + name + "'");
      }
    }
    return value + ':' + name;
  }

  public String value() {
    return value;
  }

  /**
   * The {@code Idempotency-Key} field value that names this key, as {@link #fromHeader} reads it back: the key itself
   * when it can travel bare, otherwise an RFC 8941 string ({@code "a;b"}, with {@code "} and {@code \} escaped).
   */
  public String headerValue() {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '"' || c == ';' || c == ',' || c == '\\') {
        return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
      }
    }
    return value;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IdempotencyKey && ((IdempotencyKey) o).value.equals(value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }

  @Override
  public int compareTo(IdempotencyKey o) {
    return value.compareTo(o.value);
  }

  @Override
  public String toString() {
    return value;
  }
}
